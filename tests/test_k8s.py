"""images/k8s/agent.yaml: valid against Kubernetes' own schemas, and consistent with initd
(its grace inside the pod's; its probes are initd's verbs, which tests/e2e runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

MANIFEST = Path(__file__).resolve().parent.parent / "images" / "k8s" / "agent.yaml"
SWEEP = 2  # initd/pid1/reaper.py SWEEP_GRACE


def documents() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]


@pytest.mark.parametrize("document", documents(), ids=lambda d: d["kind"])
def test_the_manifest_is_valid_kubernetes(document: dict[str, Any]) -> None:
    kubernetes_validate.validate(document, "1.30.0", strict=True)


def test_initds_grace_fits_in_the_pods() -> None:
    [deployment] = [d for d in documents() if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert float(env["INITD_GRACE"]) + SWEEP < pod["terminationGracePeriodSeconds"]
    # Readiness and startup: initd's /readyz over HTTP (no Python start per probe);
    # liveness the agent's own port: initd restarts what dies inside, so its hook service
    # restarting must not kill the pod.
    for name in ("startupProbe", "readinessProbe"):
        assert container[name]["httpGet"] == {"path": "/readyz", "port": "initd-probes"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "agent-api"}
    assert {"name": "agent-api", "containerPort": 8080} in container["ports"]
    assert {"name": "initd-probes", "containerPort": 9090} in container["ports"]
    assert env["INITD_HEALTH_PORT"] == "9090"


def test_a_broken_manifest_is_caught() -> None:
    """The validator has teeth: a typo'd field fails it."""
    [deployment] = [d for d in documents() if d["kind"] == "Deployment"]
    deployment["spec"]["template"]["spec"]["terminationGracePeriod"] = 30
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, "1.30.0", strict=True)
