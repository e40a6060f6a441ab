"""Options, each declared once in the model of its concept — the backend (`backend`), grading (`grading`),
evaluation (`evaluation`) and output (`output`) — from which the command line's arguments, the experiment
file's keys and the AutoJudge workflow settings are derived by one adapter (`model`)."""
