"""Claude Code's events as its settings and its hooks' input name them, and initd's
(hooks/kinds.py), from its hooks reference (https://code.claude.com/docs/en/hooks: the 31
events of its revision of 2026-08-22, Claude Code v2.1.240); initd's shape of an event is
Claude Code's own (events/wire.py)."""

from __future__ import annotations

EVENTS = {
    "Setup": "setup", "SessionStart": "session_start", "SessionEnd": "session_end",
    "InstructionsLoaded": "instructions_loaded", "UserPromptSubmit": "user_prompt_submit",
    "UserPromptExpansion": "user_prompt_expansion", "PreToolUse": "pre_tool",
    "PermissionRequest": "permission_request", "PermissionDenied": "permission_denied",
    "PostToolUse": "post_tool", "PostToolUseFailure": "post_tool_failure",
    "PostToolBatch": "post_tool_batch", "Notification": "notification",
    "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop",
    "TaskCreated": "task_created", "TaskCompleted": "task_completed",
    "TeammateIdle": "teammate_idle", "Stop": "stop", "StopFailure": "stop_failure",
    "PreCompact": "pre_compact", "PostCompact": "post_compact",
    "Elicitation": "elicitation", "ElicitationResult": "elicitation_result",
    "ConfigChange": "config_change", "WorktreeCreate": "worktree_create",
    "WorktreeRemove": "worktree_remove", "CwdChanged": "cwd_changed",
    "FileChanged": "file_changed", "DirectoryAdded": "directory_added",
    "MessageDisplay": "message_display"}
NAMES = {event: name for name, event in EVENTS.items()}
# where the reference discards continue: false (each event's section: "discards ...
# continue", StopFailure "ignores the hook's output", TaskCreated "ignores continue: false")
NO_CONTINUE = ("pre_compact", "session_end", "notification", "stop_failure", "post_compact",
               "worktree_remove", "cwd_changed", "file_changed", "instructions_loaded",
               "message_display", "task_created", "config_change", "directory_added",
               "worktree_create", "elicitation", "elicitation_result")
ELICITATIONS = ("elicitation", "elicitation_result")  # decline and cancel are their "no"
