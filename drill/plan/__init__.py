"""The interview plan (issue 33): the profile (`drill plan`: a date, a role, a daily budget),
readiness per topic, the one "today" queue and the simulation the plan is measured with. UI-free;
the scheduling overlay itself lives in the review layer (drill.review.deadline), which this layer
sits above."""
