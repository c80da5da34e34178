"""The shared kernel of Taskyard: the domain model and the plumbing every service uses.

Nothing here imports a service; services import only this package and generated code.
"""
