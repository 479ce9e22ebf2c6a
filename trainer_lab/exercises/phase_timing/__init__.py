from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="phase-timing",
    title="Time the phases of a step: synchronize where the clock is read",
    topic="performance",
    summary="PhaseTimer(device) with `with timer.phase(name):` and totals(): seconds per phase, "
    "summed over steps. On CUDA, kernels run behind the host, so each reading of the clock must "
    "wait for the device; on CPU there is nothing to wait for and no CUDA call may be made.",
    file="phase_timer.py",
    checks=(
        (
            "cpu_times_phases",
            "on CPU: each phase's total matches its work, and no CUDA call (on a CPU-only build, "
            "or on a machine that has a GPU)",
        ),
        (
            "waits_for_the_device",
            "on a simulated CUDA stream (work queued behind the host): no phase measures less "
            "than the work it launched",
        ),
        (
            "excludes_other_work",
            "work launched before a phase (an input copy) is not charged to that phase",
        ),
    ),
    hints=(
        "torch.cuda kernels are asynchronous: the call returns as soon as the kernel is queued. "
        "A clock read right after it measures the launch, not the work.",
        "Call torch.cuda.synchronize(device) right before each clock read, at the start of a "
        "phase as well as at its end: what was still queued when the phase began is not the "
        "phase's work. Read the clock with time.perf_counter(). (CUDA events work too: "
        "record one at each end of the phase and read elapsed_time after a synchronize.)",
        "Only synchronize when device.type == 'cuda'; on CPU every op has finished when it "
        "returns, and torch.cuda calls fail on a machine without CUDA.",
    ),
    world_size=0,
)
