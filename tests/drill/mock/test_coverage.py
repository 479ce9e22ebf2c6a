from __future__ import annotations

from drill.mock.coverage import Coverage, answer_terms, bullet_parts, cover, cover_bullet, stem


def status(answer: str, bullet: str) -> Coverage:
    return cover(answer, [bullet])[0].status


def test_plain_words_cover_a_bullet():
    assert status("Each rank logs its own metrics.", "rank-tagged metrics") is Coverage.COVERED


def test_synonyms_fold_into_one_concept():
    bullet = "optimizer state"
    assert status("I also save the Adam moments.", bullet) is Coverage.COVERED
    assert status("and the AdamW state", bullet) is Coverage.COVERED
    assert status("Keep the random seed per rank", "RNG state") is Coverage.COVERED
    assert status("watch samples/sec on every rank", "throughput") is Coverage.COVERED
    assert status("rank 0 writes it", "rank zero writes") is Coverage.COVERED


def test_stemming_matches_plural_and_verb_forms():
    assert stem("duplicating") == stem("duplicate") == stem("duplicates")
    assert stem("checkpoints") == stem("checkpoint")
    assert status("no duplicated samples after resume", "resume without duplicating samples") is (
        Coverage.COVERED
    )


def test_an_unrelated_answer_covers_nothing():
    results = cover(
        "I would use a bigger learning rate and more layers.",
        ["sampler progress and RNG state", "atomic write, temporary file then rename"],
    )
    assert [r.status for r in results] == [Coverage.MISSED, Coverage.MISSED]


def test_an_empty_answer_covers_nothing():
    assert all(r.status is Coverage.MISSED for r in cover("", ["model", "optimizer", "sampler"]))


def test_negation_does_not_count_as_naming_the_concept():
    assert status("We save weights only, no optimizer state.", "optimizer state") is Coverage.MISSED
    assert status("without the sampler", "sampler position") is Coverage.MISSED
    # negation ends at a clause boundary
    assert status("No sharding. The sampler is saved.", "sampler saved") is Coverage.COVERED


def test_negated_bullets_match_negated_answers_only():
    bullet = "no replay on resume"
    assert status("After a resume there is no replay of samples.", bullet) is Coverage.COVERED
    assert "!replay" in answer_terms("never replay")
    assert status("replay happens", "no replay") is Coverage.MISSED


def test_comma_parts_are_all_needed_and_give_partial_coverage():
    bullet = "model, optimizer, scheduler, scaler state"
    result = cover("save model and optimizer", [bullet])[0]
    assert result.status is Coverage.PARTIAL
    assert result.found == ("model", "optimizer")
    assert result.missing == ("scheduler", "scaler state")
    assert result.ratio == 0.5
    full = cover("model, optimizer, LR scheduler and the grad scaler", [bullet])[0]
    assert full.status is Coverage.COVERED


def test_or_separates_alternatives():
    assert bullet_parts("forward progress, step rate or samples per second") == [
        ["forward progress"],
        ["step rate", "samples per second"],
    ]
    bullet = "step rate or samples per second"
    assert status("I track steps per second", bullet) is Coverage.COVERED
    assert status("I track tokens per second", bullet) is Coverage.COVERED


def test_an_allreduce_implies_a_synchronization_point():
    assert status("backward then all-reduce the grads", "synchronization") is Coverage.COVERED


def test_a_named_concept_alone_does_not_state_a_wordy_item():
    bullet = "config identity to reject incompatible restores"
    # Naming the config hash is not saying what it is for: no credit, a hint only.
    assert status("store a config hash next to the weights", bullet) is not Coverage.COVERED
    answer = "keep a config hash and refuse to load a checkpoint whose hash does not match"
    assert status(answer, bullet) is Coverage.COVERED


def test_one_part_of_two_gives_partial():
    terms = answer_terms("temporary file then rename")
    result = cover_bullet("atomic write, temporary file then rename", terms)
    assert result.status is Coverage.PARTIAL
    assert result.found == ("temporary file then rename",)


def test_a_word_in_another_sense_or_a_dismissed_clause_does_not_cover_a_bullet():
    bullet = "spot instances with checkpointing"
    # Found by a new user: this answer had the bullet pre-checked.
    assert status("Activation checkpointing is not needed here.", bullet) is Coverage.MISSED
    assert status("Activation checkpointing saves memory.", bullet) is Coverage.MISSED  # sense
    assert status("Checkpointing is not needed for this job.", bullet) is Coverage.MISSED
    assert status("Spot instances, so we checkpoint every 20 minutes.", bullet) is Coverage.COVERED
    assert status("Gradient checkpointing trades compute", "activation checkpointing") is (
        Coverage.COVERED
    )


def test_an_abbreviation_in_parentheses_is_another_name_for_the_part():
    assert bullet_parts("failure rate (MTBF)") == [["failure rate", "MTBF"]]
    answer = "The interval depends on the MTBF of the cluster."
    assert status(answer, "failure rate (MTBF)") is Coverage.COVERED
    assert status("mean time between failures", "failure rate (MTBF)") is Coverage.COVERED
    assert status("the failure rate grows with nodes", "failure rate (MTBF)") is Coverage.COVERED
    assert status("the RPO we accept", "recovery point objective (RPO)") is Coverage.COVERED


# --- every part and every term of an item must be stated (issue 24) ---------------------------

FOUR_QUESTIONS = [  # decks/round-standard.yaml, the skeleton phase's inline prompt
    "data fetch, forward, backward, synchronization, optimizer update",
    "deterministic shard per rank, reshuffle by epoch",
    "resume without duplicating or skipping samples",
    "model, optimizer, scheduler, scaler state",
    "sampler progress and RNG state",
    "config identity to reject incompatible restores",
    "forward progress, step rate or samples per second",
]


def test_three_of_four_things_is_not_the_item():
    # Seen: ticked without "scaler" being mentioned.
    bullet = "model, optimizer, scheduler, scaler state"
    result = cover("I save the model, optimizer and scheduler state.", [bullet])[0]
    assert result.status is Coverage.PARTIAL and not result.covered
    assert result.missing == ("scaler state",)


def test_half_the_words_of_an_item_is_not_the_item():
    # "sampler" and "progress" are two of the three terms: the RNG was never mentioned.
    assert not cover("keep the sampler's progress", ["sampler progress and RNG state"])[0].covered
    assert not cover("the sampler and the seed", ["sampler progress and RNG state"])[0].covered


def test_an_item_never_mentioned_is_not_ticked():
    # Seen: items ticked that the answer never states (no rejection, nothing about duplicates).
    answer = (
        "Save the model, optimizer, scheduler and scaler with a config hash. Each rank gets a "
        "shard; track samples per second after resume."
    )
    ticked = [c.bullet for c in cover(answer, FOUR_QUESTIONS) if c.covered]
    assert ticked == ["model, optimizer, scheduler, scaler state"]


def test_a_negation_covers_both_alternatives_joined_by_or():
    bullet = "resume without duplicating or skipping samples"
    assert bullet_parts(bullet) == [[bullet]]
    assert not cover("after a resume we skip samples", [bullet])[0].covered
    assert not cover("resume, duplicating some samples", [bullet])[0].covered
    assert cover("on resume no sample is duplicated or skipped", [bullet])[0].covered


HELD_OUT_RIGHT = [  # a right answer in other words than the rubric's
    (
        "One step: fetch the next batch, run the forward pass and backward, all-reduce the "
        "gradients, then the optimizer step.",
        "data fetch, forward, backward, synchronization, optimizer update",
    ),
    (
        "DistributedSampler hands every rank a deterministic shard and set_epoch reshuffles it "
        "each epoch.",
        "deterministic shard per rank, reshuffle by epoch",
    ),
    (
        "After a restart no sample is repeated or skipped.",
        "resume without duplicating or skipping samples",
    ),
    (
        "Checkpoint the weights, the AdamW moments, the LR schedule and the GradScaler.",
        "model, optimizer, scheduler, scaler state",
    ),
    (
        "Persist the sampler's position and each rank's random generator state.",
        "sampler progress and RNG state",
    ),
    (
        "Store a config fingerprint and abort when a checkpoint's fingerprint mismatches ours "
        "on load.",
        "config identity to reject incompatible restores",
    ),
    ("Page when forward progress stalls; watch samples/sec.", FOUR_QUESTIONS[6]),
    (
        "A grad scaler's state is saved along with model and optimizer and scheduler.",
        FOUR_QUESTIONS[3],
    ),
    ("Each rank logs its metrics, tagged with the rank.", "rank-tagged metrics"),
]


def test_held_out_right_answers_in_other_words_get_credit():
    for answer, bullet in HELD_OUT_RIGHT:
        assert cover(answer, [bullet])[0].covered, (answer, bullet)


HELD_OUT_WRONG = [  # an answer that leaves out, or contradicts, part of the item
    ("Fetch, forward, backward and the optimizer step.", FOUR_QUESTIONS[0]),  # no sync
    ("Each rank gets a random shard of the data.", FOUR_QUESTIONS[1]),  # no reshuffle
    ("Checkpoint the weights and the AdamW moments.", FOUR_QUESTIONS[3]),
    ("Persist the sampler's position.", FOUR_QUESTIONS[4]),  # no RNG
    ("We save weights only, without the RNG or the sampler.", FOUR_QUESTIONS[4]),
    ("Store a config fingerprint next to the weights.", FOUR_QUESTIONS[5]),
    ("Watch the loss curve.", FOUR_QUESTIONS[6]),
]


def test_held_out_incomplete_or_contradicting_answers_get_no_credit():
    for answer, bullet in HELD_OUT_WRONG:
        assert not cover(answer, [bullet])[0].covered, (answer, bullet)


CHECKPOINT_ITEMS = [  # the 70B follow-up's rubric (drill.mock.coding.followup_table), filled in
    "Shards the save: each rank writes its own part (torch.distributed.checkpoint), optionally "
    "async (stage to CPU, write in the background)",
    "Keeps it atomic across many files: metadata or a commit marker written last, and the "
    "resume takes committed checkpoints only",
]

HELD_OUT_DOMAIN_RIGHT = [  # stated in the domain's other names: abbreviations, forms, spellings
    (
        "sharded checkpoints (torch.distributed.checkpoint), each rank writes its shard, "
        "async save",
        CHECKPOINT_ITEMS[0],
    ),
    ("Use DCP: every rank saves its own shard, asynchronously.", CHECKPOINT_ITEMS[0]),
    ("dist checkpoint with a background thread doing the writes", "DCP, async"),
    ("all-reduce then the optimizer step", "allreduce before the update"),
    ("rank zero writes the ckpt", "rank-0 saves the checkpoint"),
    ("the run is non-deterministic because of floating point", "determinism"),
    ("a compressed gradient hook", "gradient compression"),
    ("the replicas diverge after a few hundred steps", "replica divergence"),
    ("the checkpoint stays compatible with the code", "checkpoint compatibility"),
    ("MTBF falls as nodes are added", "failure rate (MTBF)"),
    ("The step time is set by the slowest rank.", "slowest rank sets the step time"),
]


def test_held_out_domain_phrasings_get_credit():
    for answer, bullet in HELD_OUT_DOMAIN_RIGHT:
        assert cover(answer, [bullet])[0].covered, (answer, bullet)


HELD_OUT_DOMAIN_WRONG = [  # near misses in the same vocabulary
    ("rank 0 gathers the state dict and calls torch.save", CHECKPOINT_ITEMS[0]),
    ("save a checkpoint asynchronously from rank 0", CHECKPOINT_ITEMS[0]),
    ("each rank writes its shard", CHECKPOINT_ITEMS[1]),
    ("a checkpoint, written by rank 0", "DCP"),
    ("an all-gather of the parameters", "allreduce before the update"),
    ("the run is deterministic", "non-deterministic reduction order"),
    ("shards optimizer state", "stage 1 shards optimizer state"),  # the subject unsaid
    ("the slowest rank", "slowest rank sets the step time"),  # two of four words
    ("checkpoint(block, x) around each block", "selective checkpoint(block, x) per transformer"),
]


def test_held_out_domain_near_misses_get_no_credit():
    for answer, bullet in HELD_OUT_DOMAIN_WRONG:
        assert not cover(answer, [bullet])[0].covered, (answer, bullet)


def test_a_dotted_name_is_one_clause_and_a_name_in_parentheses_is_another_name_for_its_part():
    assert bullet_parts(
        "Shards (torch.distributed.checkpoint), optionally async (stage to CPU)"
    ) == [
        ["Shards", "torch.distributed.checkpoint"],
        ["optionally async"],
    ]
    assert "@dcp" in answer_terms("torch.distributed.checkpoint.save(state, dir)")


def test_a_partial_item_counts_half_toward_a_rating_and_is_never_ticked():
    from drill.mock.coding.report import coverage_rating
    from drill.mock.coverage import credit

    assert credit(["covered", "partial", "missed", "?"]) == 1.5
    assert coverage_rating(["covered", "covered"]) is None
    assert coverage_rating(["covered", "partial", "missed"]) == 2  # 1.5 of 3: Hard
    assert coverage_rating(["partial", "partial", "missed", "missed"]) == 1  # 1 of 4: Again
    assert coverage_rating(["covered", "partial", "missed", "missed"]) == 1  # 1.5 of 4
    assert not cover("save model and optimizer", ["model, optimizer, scheduler"])[0].covered
