from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="first-nan",
    title="Find the first NaN with forward hooks",
    topic="debugging",
    summary="first_bad_module(model, x): run one forward pass and return the name (as in "
    "named_modules) of the first module whose output is not finite, or None; leave no hooks.",
    file="nan_hunt.py",
    checks=(
        ("names_the_first", "the module where the NaN/inf first appears, for two broken models"),
        ("clean_is_none", "a healthy model gives None"),
        ("hooks_removed", "no hook is left on the model afterwards"),
    ),
    hints=(
        "module.register_forward_hook(fn) calls fn(module, inputs, output) after the module's "
        "forward; register one on every module from model.named_modules().",
        "Hooks fire in execution order, leaves before their parents: keep the first name only.",
        "register_forward_hook returns a handle: call handle.remove() in a finally block.",
    ),
    world_size=0,
)
