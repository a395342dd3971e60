"""deploy/compose.yaml: valid by the Compose Specification's JSON schema (vendored in
compose_spec/, see its README), and every image, port, volume and variable it names exists:
the image the Containerfile builds, the ports the processes listen on, the files it mounts, the
paths the image declares, the settings assetgate reads and the template's placeholders."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assetgate.settings import Settings
from tests.deploy.compose_file import load
from tests.serve_process import run_cli

pytestmark = pytest.mark.slow  # compose: the image the Containerfile builds

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
SCHEMA = Path(__file__).parent / "compose_spec" / "compose-spec.json"
NODES = ("node-a", "node-b")
AWS = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}
INTERPOLATED = {
    "S3_ACCESS_KEY", "S3_SECRET_KEY", "ASSETGATE_SITE", "RESULT_STORE_KEY", "BACKEND_SUBNET",
    "EDGE_ADDRESS",
}  # fmt: skip


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """The file as Compose reads it with no variable set: every ``${VAR:-default}`` its default."""
    return load({})


def containerfile() -> dict[str, Any]:
    """EXPOSE, VOLUME and ENV of the image's final stage."""
    text = (DEPLOY / "Containerfile").read_text().replace("\\\n", " ")
    final = text.rsplit("\nFROM ", 1)[1]
    env = dict(re.findall(r"(\w+)=(\S+)", re.search(r"^ENV (.+)$", final, re.M)[1]))  # type: ignore[index]
    volumes = json.loads(re.search(r"^VOLUME (.+)$", final, re.M)[1])  # type: ignore[index]
    exposed = re.search(r"^EXPOSE (\d+)$", final, re.M)[1]  # type: ignore[index]
    return {"env": env, "volumes": set(volumes), "expose": exposed}


def test_compose_yaml_is_valid_by_the_compose_specification(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(compose), key=str)
    assert errors == [], "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


def test_the_schema_check_can_fail(compose: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    broken = json.loads(json.dumps(compose))
    broken["services"]["node-a"]["healthcheck"]["retrys"] = 3  # misspelt key
    broken["services"]["redis"]["restart_policy"] = "always"
    assert len(list(jsonschema.Draft7Validator(schema).iter_errors(broken))) == 2


def test_the_nodes_run_the_image_the_containerfile_builds(compose: dict[str, Any]) -> None:
    docs = (REPO / "docs" / "deploying.md").read_text()
    build = compose["services"]["node-a"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Containerfile"
    # One build of one tag: node-b runs what node-a built and never pulls it.
    assert "build" not in compose["services"]["node-b"]
    assert compose["services"]["node-b"]["pull_policy"] == "never"
    for name in NODES:
        node = compose["services"][name]
        assert node["image"] == compose["services"]["node-a"]["image"]
        assert f"-t {node['image']} " in docs  # the documented build command tags this image
        assert node["healthcheck"]["test"] == ["CMD", "assetgate", "health"]
    assert run_cli("health", "--help").returncode == 0


def test_other_images_are_pinned_to_a_release(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if name in NODES:
            continue
        image = service["image"]
        registry, _, rest = image.partition("/")
        repository, _, tag = rest.rpartition(":")
        assert registry == "docker.io", image
        assert "/" in repository, image  # library/… spelled out: no short-name guessing
        assert re.fullmatch(r"\d+(\.\d+)+(-bookworm)?", tag), image


def test_ports_match_what_each_process_listens_on(compose: dict[str, Any]) -> None:
    services = compose["services"]
    image = containerfile()
    nginx_env = services["nginx"]["environment"]
    assert services["nginx"]["ports"] == [f"8080:{nginx_env['EDGE_LISTEN']}"]
    upstreams = re.findall(r"server ([\w-]+):(\d+);", nginx_env["EDGE_UPSTREAMS"])
    assert sorted(host for host, _ in upstreams) == sorted(NODES)
    for name in NODES:
        env = services[name]["environment"]
        assert {port for _, port in upstreams} == {env["ASSETGATE_PORT"]} == {image["expose"]}
        redis = re.fullmatch(r"redis://([\w-]+):(\d+)/\d+", env["ASSETGATE_REDIS_URL"])
        assert redis is not None
        assert redis[1] in services
        assert redis[2] == "6379"  # redis-server's default; the service sets no other
        s3 = re.fullmatch(r"http://([\w-]+):(\d+)", env["ASSETGATE_S3_ENDPOINT_URL"])
        assert s3 is not None
        assert s3[1] == "seaweedfs"
        assert f"-s3.port={s3[2]}" in services["seaweedfs"]["command"]
        assert s3[2] in " ".join(services["seaweedfs"]["healthcheck"]["test"])


def test_nginx_is_the_trusted_proxy_at_its_fixed_address(compose: dict[str, Any]) -> None:
    nginx = compose["services"]["nginx"]["networks"]["backend"]["ipv4_address"]
    subnet = compose["networks"]["backend"]["ipam"]["config"][0]["subnet"]
    assert ipaddress.ip_address(nginx) in ipaddress.ip_network(subnet)
    for name in NODES:
        assert compose["services"][name]["environment"]["ASSETGATE_TRUSTED_PROXIES"] == nginx


def mount(entry: str) -> tuple[str, str]:
    """(source, target) of a short-syntax volume; a ``${VAR:-default}`` source keeps its colon."""
    found = re.fullmatch(r"(\$\{[^}]*\}|[^:]+):([^:]+)(?::ro)?", entry)
    assert found is not None, entry
    return found[1], found[2]


def test_every_volume_exists(compose: dict[str, Any]) -> None:
    declared = set(compose["volumes"])
    used: set[str] = set()
    image = containerfile()
    for name, service in compose["services"].items():
        for entry in service.get("volumes", []):
            source, target = mount(entry)
            if source.startswith(("./", "../", "${")):
                default = re.fullmatch(r"\$\{\w+:-(.+)\}", source)
                path = DEPLOY / (default[1] if default else source)
                assert path.exists(), f"{name}: {source} does not exist"
            else:
                used.add(source)
            if name in NODES and not source.startswith(("./", "../", "${")):
                assert target in image["volumes"], f"{name}: {target} is not a VOLUME of the image"
        if name in NODES:
            targets = {mount(entry)[1] for entry in service["volumes"]}
            assert targets == (image["volumes"] - {"/tmp"}) | {image["env"]["ASSETGATE_ROOT"]}
            assert service["tmpfs"] == ["/tmp"]
    assert used == declared  # each named volume declared, each declared one used
    template = mount(compose["services"]["nginx"]["volumes"][0])[1]
    # The official image renders templates/NAME.template into conf.d/NAME: as default.conf it
    # replaces the stock site that answered http://localhost:8080/ with nginx's welcome page.
    assert template == "/etc/nginx/templates/default.conf.template"


def test_the_result_store_key_is_long_enough(compose: dict[str, Any]) -> None:
    for name in NODES:
        key = compose["services"][name]["environment"]["ASSETGATE_RESULT_STORE_KEY"]
        assert len(key) >= 32
    given = load({"RESULT_STORE_KEY": "k" * 40})
    assert given["services"]["node-b"]["environment"]["ASSETGATE_RESULT_STORE_KEY"] == "k" * 40


def test_the_nodes_address_seaweedfs_path_style(compose: dict[str, Any]) -> None:
    for name in NODES:
        env = compose["services"][name]["environment"]
        settings = Settings(s3_path_style=env["ASSETGATE_S3_PATH_STYLE"])
        assert settings.path_style(env["ASSETGATE_S3_ENDPOINT_URL"]) is True


def test_every_variable_exists(compose: dict[str, Any]) -> None:
    fields = {f"ASSETGATE_{name.upper()}" for name in Settings.model_fields}
    for name in NODES:
        env = set(compose["services"][name]["environment"])
        assetgate = {key for key in env if key.startswith("ASSETGATE_")}
        assert assetgate <= fields, assetgate - fields
        assert env - assetgate == AWS
    placeholders = set(
        re.findall(r"\$\{(EDGE_\w+)\}", (DEPLOY / "nginx.conf.template").read_text())
    )
    nginx_env = set(compose["services"]["nginx"]["environment"]) - {"NGINX_ENVSUBST_FILTER"}
    assert nginx_env == placeholders
    interpolated = set(re.findall(r"\$\{(\w+)(?::-[^}]*)?\}", COMPOSE.read_text()))
    assert interpolated == INTERPOLATED
    header = COMPOSE.read_text().split("\nname:", 1)[0]
    assert all(variable in header for variable in INTERPOLATED)  # each explained at the top
