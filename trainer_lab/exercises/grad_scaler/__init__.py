from trainer_lab.exercises.spec import ExerciseSpec

SPEC = ExerciseSpec(
    name="grad-scaler",
    title="Mixed precision with GradScaler: skip the overflow step",
    topic="precision",
    summary="train_step(model, optimizer, scaler, x, y): one fp16-autocast step with loss "
    "scaling; a step whose gradients overflow must not touch the weights, and the scale backs off.",
    file="amp_step.py",
    checks=(
        ("skips_overflow", "the step with inf gradients leaves every weight unchanged"),
        ("scale_backs_off", "after the overflow the loss scale is lower"),
        ("matches_reference", "the other steps equal a correct fp16 GradScaler step"),
    ),
    hints=(
        "scaler.scale(loss).backward(), then scaler.step(optimizer) (it unscales the gradients "
        "and skips the step when any is inf/NaN), then scaler.update().",
        "Autocast the forward only: with torch.autocast('cpu', dtype=torch.float16): ...",
        "scaler.update() is what lowers the scale after an overflow.",
    ),
    world_size=0,
)
