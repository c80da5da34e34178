from taskyard.cli.main import main

main()
