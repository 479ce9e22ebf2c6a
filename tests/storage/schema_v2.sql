-- The schema of a drill database at version 2, as the code before v3 left it: PRAGMA
-- user_version 2 from storage/migrations.py (v1, v2) plus the mock and lab tables that
-- SQLModel's create_all made on open. Dumped from sqlite_master of such a file; frozen.

CREATE TABLE card_state (
        card_id VARCHAR NOT NULL PRIMARY KEY,
        deck_id VARCHAR NOT NULL,
        state INTEGER,
        step INTEGER,
        stability FLOAT,
        difficulty FLOAT,
        due DATETIME,
        last_review DATETIME,
        reps INTEGER NOT NULL DEFAULT 0,
        lapses INTEGER NOT NULL DEFAULT 0,
        suspended BOOLEAN NOT NULL DEFAULT 0,
        buried_until DATETIME,
        content_hash VARCHAR
    , introduced_at DATETIME);

CREATE INDEX ix_card_state_due ON card_state (due);

CREATE TABLE review_log (
        id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
        card_id VARCHAR NOT NULL,
        deck_id VARCHAR NOT NULL,
        rating INTEGER NOT NULL,
        reviewed_at DATETIME NOT NULL,
        duration_ms INTEGER NOT NULL,
        state_before VARCHAR,
        state_after VARCHAR NOT NULL
    , content_hash VARCHAR);

CREATE INDEX ix_review_log_card_id ON review_log (card_id);

CREATE INDEX ix_card_state_introduced_at ON card_state (introduced_at);

CREATE TABLE mock_round (
	id INTEGER NOT NULL,
	round_key VARCHAR NOT NULL,
	title VARCHAR NOT NULL,
	status VARCHAR NOT NULL,
	definition_json VARCHAR NOT NULL,
	budgets_json VARCHAR NOT NULL,
	clock_json VARCHAR NOT NULL,
	started_at DATETIME NOT NULL,
	updated_at DATETIME NOT NULL,
	finished_at DATETIME,
	PRIMARY KEY (id)
);

CREATE INDEX ix_mock_round_round_key ON mock_round (round_key);

CREATE INDEX ix_mock_round_status ON mock_round (status);

CREATE TABLE lab_run (
	id INTEGER NOT NULL,
	lab VARCHAR NOT NULL,
	params_json VARCHAR NOT NULL,
	world_size INTEGER NOT NULL,
	card_id VARCHAR,
	deck_id VARCHAR,
	started_at DATETIME NOT NULL,
	duration_s FLOAT,
	status VARCHAR NOT NULL,
	summary_json VARCHAR NOT NULL,
	run_dir VARCHAR NOT NULL,
	predicted VARCHAR,
	certainty VARCHAR,
	prediction_right BOOLEAN,
	suggested_rating INTEGER,
	rating INTEGER,
	PRIMARY KEY (id)
);

CREATE INDEX ix_lab_run_started_at ON lab_run (started_at);

CREATE INDEX ix_lab_run_lab ON lab_run (lab);

CREATE INDEX ix_lab_run_card_id ON lab_run (card_id);

CREATE TABLE mock_prompt (
	id INTEGER NOT NULL,
	round_id INTEGER NOT NULL,
	phase_index INTEGER NOT NULL,
	position INTEGER NOT NULL,
	prompt_key VARCHAR NOT NULL,
	card_id VARCHAR,
	deck_id VARCHAR,
	text VARCHAR NOT NULL,
	rubric_json VARCHAR NOT NULL,
	answer VARCHAR NOT NULL,
	answer_saved_at DATETIME,
	PRIMARY KEY (id),
	FOREIGN KEY(round_id) REFERENCES mock_round (id)
);

CREATE INDEX ix_mock_prompt_round_id ON mock_prompt (round_id);

CREATE INDEX ix_mock_prompt_card_id ON mock_prompt (card_id);

CREATE TABLE mock_report (
	round_id INTEGER NOT NULL,
	created_at DATETIME NOT NULL,
	overall_band VARCHAR NOT NULL,
	overall_score FLOAT NOT NULL,
	report_json VARCHAR NOT NULL,
	PRIMARY KEY (round_id),
	FOREIGN KEY(round_id) REFERENCES mock_round (id)
);

CREATE TABLE mock_grade (
	id INTEGER NOT NULL,
	prompt_id INTEGER NOT NULL,
	bullet_index INTEGER NOT NULL,
	bullet VARCHAR NOT NULL,
	auto_status VARCHAR NOT NULL,
	checked BOOLEAN NOT NULL,
	PRIMARY KEY (id),
	FOREIGN KEY(prompt_id) REFERENCES mock_prompt (id)
);

CREATE INDEX ix_mock_grade_prompt_id ON mock_grade (prompt_id);

PRAGMA user_version = 2;
