"""What the control API answers, built in one place and one casing
(initd/service/views.py): camelCase fields, a hook's front matter and a payload's keys as
written, and each problem in the shape its answer has always had."""

from __future__ import annotations

from initd.config.problems import Problem
from initd.events import conditions
from initd.events.model import Shell
from initd.hooks.discovery import Found
from initd.hooks.filehooks import Ran
from initd.hooks.model import Hook
from initd.service import views
from tests.hooks.support import result
from tests.support.calls import hook as event_hook

HOOK = Hook(id="fmt", name="10-fmt.sh", type="file", path="/ws/.discobot/hooks/10-fmt.sh",
            directory="/ws/.discobot/hooks", pattern="*.py", notify_llm=False,
            options=(("tool_name", "bash"), ("on_error", "deny")))


def test_a_hook_in_camel_case_its_front_matter_as_written() -> None:
    view = views.hook(HOOK)
    assert (view["id"], view["notifyLlm"], view["runAs"]) == ("fmt", False, "user")
    assert view["options"] == {"tool_name": "bash", "on_error": "deny"}


def test_an_event_hook_its_condition_by_its_text() -> None:
    made = event_hook(Shell("make"), when=conditions.parse("${ITERATION} > 1"),
                      tool_name=("bash",))
    view = views.event_hook(made)
    assert (view["action"], view["when"], view["toolName"]) == ("shell", "${ITERATION} > 1",
                                                                ["bash"])
    assert views.event_hook(made._replace(when=None))["when"] is None


def test_the_three_shapes_of_a_problem() -> None:
    found = Problem("/ws/.devcontainer/devcontainer.json", "remoteEnv.A", "expected text")
    assert views.skipped(found) == {"path": found.path, "reason": "expected text",
                                    "severity": "error"}
    assert views.config_problem(found)["reason"] == \
        "/ws/.devcontainer/devcontainer.json: remoteEnv.A: expected text"
    assert views.problem(found) == {"path": found.path, "key": "remoteEnv.A",
                                    "reason": "expected text", "severity": "error"}
    listing = views.hooks(Found(hooks=(HOOK,), problems=(found,)))
    assert [h["id"] for h in listing["hooks"]] == ["fmt"] and len(listing["skipped"]) == 1


def test_a_ran_file_hook_and_a_rerun() -> None:
    one = Ran(HOOK, ("a.py",), result(1, "/out/fmt.log")._replace(duration=0.01234))
    assert views.ran(one) == {
        "hookId": "fmt", "name": "10-fmt.sh", "success": False, "exitCode": 1,
        "timedOut": False, "cancelled": False, "refused": False, "error": None,
        "killedByLimit": None, "files": ["a.py"], "outputPath": "/out/fmt.log",
        "durationMs": 12.3}
    assert views.rerun(HOOK, result(0)) == {"hookId": "fmt", "success": True,
                                            "exitCode": 0, "timedOut": False,
                                            "outputPath": "/tmp/x.log"}
