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


def test_a_named_concept_is_enough_for_a_wordy_alternative():
    bullet = "config identity to reject incompatible restores"
    assert status("store a config hash next to the weights", bullet) is Coverage.COVERED


def test_one_part_of_two_gives_partial():
    terms = answer_terms("temporary file")
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
