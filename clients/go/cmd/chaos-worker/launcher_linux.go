package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// endWithLauncher asks for SIGTERM (a drain) when the process named by
// TASKYARD_LAUNCHER_PID, the runner that started this worker, dies, as the
// suite's services do (taskyard.core.lifecycle.end_with_launcher): a runner
// killed outright leaves no worker behind reconnecting for good. The launcher
// cannot ask for it between fork and exec without a preexec_fn, which gRPC's
// at-fork handlers make unsafe in a Python launcher.
func endWithLauncher() error {
	raw := os.Getenv("TASKYARD_LAUNCHER_PID")
	if raw == "" {
		return nil
	}
	os.Unsetenv("TASKYARD_LAUNCHER_PID")
	launcher, err := strconv.Atoi(raw)
	if err != nil {
		return fmt.Errorf("TASKYARD_LAUNCHER_PID must be a process id, not %q", raw)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", errno)
	}
	// Orphaned before the call above, the signal would never come: it is now.
	if os.Getppid() != launcher {
		return syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
	return nil
}
