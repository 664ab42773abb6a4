"""Each of Claude Code's 31 events' own input fields, as the JSON example of the event's
section in the reference shows them (https://code.claude.com/docs/en/hooks, the revision of
2026-08-22, Claude Code v2.1.240), the "..." of the examples made concrete. The common
fields are claude_current_support.payload's."""

from __future__ import annotations

from typing import Any

TOOL = {"tool_name": "Bash", "tool_input": {"command": "npm test",
                                            "description": "Run test suite"}}

# Each event's own fields, as the reference's JSON example for it shows them ("..." made
# concrete); `permission_mode` where that example has it.
OWN: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup", "model": "claude-sonnet-5"},
    "Setup": {"trigger": "init"},
    "UserPromptSubmit": {"permission_mode": "default",
                         "prompt": "Write a function to calculate the factorial of a number"},
    "UserPromptExpansion": {"permission_mode": "default", "expansion_type": "slash_command",
                            "command_name": "example-skill", "command_args": "arg1 arg2",
                            "command_source": "plugin", "prompt": "/example-skill arg1 arg2"},
    "PreToolUse": {"permission_mode": "default", **TOOL, "tool_use_id": "toolu_01ABC123"},
    "PermissionRequest": {
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf node_modules",
                       "description": "Remove node_modules directory"},
        "permission_suggestions": [{"type": "addRules", "rules": [
            {"toolName": "Bash", "ruleContent": "rm -rf node_modules"}],
            "behavior": "allow", "destination": "localSettings"}]},
    "PermissionDenied": {"permission_mode": "auto", "tool_name": "Bash",
                         "tool_input": {"command": "rm -rf /tmp/build",
                                        "description": "Clean build directory"},
                         "tool_use_id": "toolu_01ABC123", "reason": "Blocked by classifier"},
    "PostToolUse": {"permission_mode": "default", "tool_name": "Write",
                    "tool_input": {"file_path": "/path/to/file.txt", "content": "file content"},
                    "tool_response": {"filePath": "/path/to/file.txt", "success": True},
                    "tool_use_id": "toolu_01ABC123", "duration_ms": 12},
    "PostToolUseFailure": {"permission_mode": "default", **TOOL,
                           "tool_use_id": "toolu_01ABC123",
                           "error": "Exit code 1\nError: Cannot find module 'express'",
                           "is_interrupt": False, "duration_ms": 4187},
    "PostToolBatch": {"permission_mode": "default", "tool_calls": [
        {"tool_name": "Read", "tool_input": {"file_path": "/src/ledger/accounts.py"},
         "tool_use_id": "toolu_01", "tool_response": "     1\tfrom __future__ import x\n"},
        {"tool_name": "Read", "tool_input": {"file_path": "/src/ledger/transactions.py"},
         "tool_use_id": "toolu_02", "tool_response": "     1\tfrom __future__ import y\n"}]},
    "Notification": {"message": "Claude needs your permission", "title": "Permission needed",
                     "notification_type": "permission_prompt"},
    "MessageDisplay": {"turn_id": "0c9e6a2f-7d41-4f4e-9a15-3f4f7c2b8d10",
                       "message_id": "5b2a9c8e-1f63-4d8a-b7c4-9e0d2a6f1c3b", "index": 0,
                       "final": False, "delta": "Here is the plan:\n"},
    "SubagentStart": {"agent_id": "agent-abc123", "agent_type": "Explore"},
    "SubagentStop": {"permission_mode": "default", "stop_hook_active": False,
                     "agent_id": "def456", "agent_type": "Explore",
                     "agent_transcript_path": "/home/u/.claude/projects/p/abc/subagents/a.jsonl",
                     "last_assistant_message": "Analysis complete. Found 3 potential issues",
                     "background_tasks": [], "session_crons": []},
    "TaskCreated": {"permission_mode": "default", "task_id": "task-001",
                    "task_subject": "Implement user authentication",
                    "task_description": "Add login and signup endpoints",
                    "teammate_name": "implementer", "team_name": "session-a1b2c3d4"},
    "TaskCompleted": {"permission_mode": "default", "task_id": "task-001",
                      "task_subject": "Implement user authentication",
                      "task_description": "Add login and signup endpoints",
                      "teammate_name": "implementer", "team_name": "session-a1b2c3d4"},
    "Stop": {"permission_mode": "default", "stop_hook_active": False,
             "last_assistant_message": "I've completed the refactoring.",
             "background_tasks": [{"id": "task-001", "type": "shell", "status": "running",
                                   "description": "tail logs",
                                   "command": "tail -f /var/log/syslog"}],
             "session_crons": [{"id": "cron-001", "schedule": "0 9 * * 1-5",
                                "recurring": True, "prompt": "check the build"}]},
    "StopFailure": {"error": "rate_limit", "error_details": "429 Too Many Requests",
                    "last_assistant_message": "API Error: Rate limit reached"},
    "TeammateIdle": {"permission_mode": "default", "teammate_name": "researcher",
                     "team_name": "session-a1b2c3d4"},
    "InstructionsLoaded": {"file_path": "/home/u/my-project/CLAUDE.md",
                           "memory_type": "Project", "load_reason": "session_start"},
    "ConfigChange": {"source": "project_settings",
                     "file_path": "/home/u/my-project/.claude/settings.json"},
    "CwdChanged": {"old_cwd": "/home/u/my-project", "new_cwd": "/home/u/my-project/src"},
    "DirectoryAdded": {"directory": "/home/u/my-other-repo", "source": "slash_command"},
    "FileChanged": {"file_path": "/home/u/my-project/.envrc", "event": "change"},
    "WorktreeCreate": {"name": "feature-auth"},
    "WorktreeRemove": {"worktree_path": "/home/u/my-project/.claude/worktrees/feature-auth"},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "PostCompact": {"trigger": "manual",
                    "compact_summary": "Summary of the compacted conversation..."},
    "Elicitation": {"permission_mode": "default", "mcp_server_name": "my-mcp-server",
                    "message": "Please provide your credentials", "mode": "form",
                    "requested_schema": {"type": "object", "properties": {
                        "username": {"type": "string", "title": "Username"}}}},
    "ElicitationResult": {"permission_mode": "default", "mcp_server_name": "my-mcp-server",
                          "action": "accept", "content": {"username": "alice"},
                          "mode": "form", "elicitation_id": "elicit-123"},
    "SessionEnd": {"reason": "other"},
}
