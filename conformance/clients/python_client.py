"""PyPI `mcp==2.3.0`'s high-level `mcp.client.Client` over stdio against lean-beam-mcp.

    python python_client.py --server PATH --test-host PATH

Modes: `auto` (probes server/discover, must settle on 2026-07-28), the pinned `"2026-07-28"`
(no probe) and `legacy` (initialize at 2025-11-25). The real server answers negotiation,
tools/list, beam_version and teardown; the test host serves the progress and log tools.
Prints `PASS <lane>/<check>` or `FAIL <lane>/<check>: reason` per check; exits 1 on any FAIL.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.client.stdio as mcp_stdio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SDK = "py-mcp-2.3.0"

# logging/setLevel and ping are deprecated in 2026-07-28 but are exactly what the legacy lane tests.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

failures = 0
spawned: list[Any] = []

# The SDK keeps its child process private; record each one it spawns so teardown can check the
# exit status and that the process was reaped.
_spawn = mcp_stdio._create_platform_compatible_process  # noqa: SLF001


async def _recording_spawn(*args: Any, **kwargs: Any) -> Any:
    process = await _spawn(*args, **kwargs)
    spawned.append(process)
    return process


mcp_stdio._create_platform_compatible_process = _recording_spawn  # noqa: SLF001


def report(lane: str, name: str, error: BaseException | None, detail: str | None = None) -> None:
    global failures
    if error is None:
        print(f"PASS {lane}/{name}" + (f" ({detail})" if detail else ""), flush=True)
    else:
        failures += 1
        reason = " ".join(f"{type(error).__name__}: {error}".split())
        print(f"FAIL {lane}/{name}: {reason}", flush=True)


async def check(lane: str, name: str, body: Callable[[], Awaitable[str | None]]) -> bool:
    try:
        with anyio.fail_after(20):
            detail = await body()
    except Exception as error:  # noqa: BLE001 - every failure is a FAIL line
        report(lane, name, error)
        return False
    report(lane, name, None, detail)
    return True


def expect_equal(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def params(command: str) -> StdioServerParameters:
    return StdioServerParameters(command=command, args=[], env={"PATH": os.environ.get("PATH", "")})


def children() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == os.getpid():
            found.append(int(entry))
    return found


def check_teardown(lane: str, first_spawn: int) -> None:
    """After the client's context exits: every process it spawned exited 0 and is gone."""
    try:
        processes = spawned[first_spawn:]
        if not processes:
            raise AssertionError("the client spawned no process")
        for process in processes:
            expect_equal(process.returncode, 0, f"exit status of server pid {process.pid}")
            if os.path.exists(f"/proc/{process.pid}"):
                raise AssertionError(f"server pid {process.pid} still exists (not reaped)")
        expect_equal(children(), [], "child processes left behind")
    except Exception as error:  # noqa: BLE001
        report(lane, "teardown", error)
        return
    report(lane, "teardown", None, f"{len(processes)} process(es) exited 0, none left")


def check_beam_version(result: Any) -> str:
    if result.is_error:
        raise AssertionError(f"isError: {result.content}")
    structured = result.structured_content
    expect_equal((structured or {}).get("mcp_protocol"), MODERN, "structuredContent.mcp_protocol")
    expect_equal(result.content[0].type, "text", "content[0].type")
    expect_equal(json.loads(result.content[0].text), structured, "content[0].text as JSON")
    return f"{structured['name']} {structured['version']}"


async def real_server(server: str, mode: str) -> None:
    lane = f"{SDK}/{mode}/server"
    expected_version = LEGACY if mode == "legacy" else MODERN
    first = len(spawned)
    try:
        async with Client(params(server), mode=mode, read_timeout_seconds=10) as client:
            report(lane, "connect", None)

            async def version() -> str:
                expect_equal(client.protocol_version, expected_version, "negotiated protocol version")
                return client.protocol_version

            await check(lane, "negotiated-version", version)
            if mode == "auto":

                async def discover() -> None:
                    result = client.session.discover_result
                    expect_equal(result.supported_versions if result else None, [MODERN], "discover supportedVersions")

                await check(lane, "discover-supported-versions", discover)

            async def server_info() -> None:
                expect_equal(client.server_info.name if client.server_info else None, "lean-beam-mcp", "serverInfo.name")

            if mode != MODERN:  # a pinned client synthesizes its discover result and learns no identity
                await check(lane, "server-info", server_info)
            if mode == "legacy":

                async def ping() -> None:
                    await client.session.send_ping()

                await check(lane, "ping", ping)

            async def tools() -> str:
                names = [tool.name for tool in (await client.list_tools()).tools]
                if "beam_version" not in names:
                    raise AssertionError(f"beam_version missing from {names}")
                return ", ".join(names)

            await check(lane, "tools-list", tools)

            async def beam_version() -> str:
                return check_beam_version(await client.call_tool("beam_version", {}))

            await check(lane, "beam-version-call", beam_version)
    except Exception as error:  # noqa: BLE001
        report(lane, "connect-or-close", error)
    check_teardown(lane, first)


async def test_host(test_host_binary: str, mode: str) -> None:
    lane = f"{SDK}/{mode}/test-host"
    messages: list[Any] = []

    async def on_log(log_params: Any) -> None:
        messages.append(log_params)

    async def delivered(data: str, wait: float) -> list[Any]:
        with anyio.move_on_after(wait):
            while not any(m.data == data for m in messages):
                await anyio.sleep(0.01)
        return [m for m in messages if m.data == data]

    first = len(spawned)
    try:
        async with Client(params(test_host_binary), mode=mode, read_timeout_seconds=10, logging_callback=on_log) as client:
            report(lane, "connect", None)

            async def progress() -> str:
                seen: list[float] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    seen.append(value)

                result = await client.call_tool("progress", {"steps": 5}, progress_callback=on_progress)
                expect_equal((result.structured_content or {}).get("sent"), 5, "tool result `sent`")
                # The client dispatches in wire order, so every notification arrives before the answer.
                expect_equal(len(seen), 5, "progress callbacks")
                if any(b <= a for a, b in zip(seen, seen[1:])):
                    raise AssertionError(f"progress not strictly increasing: {seen}")
                return f"{len(seen)} strictly increasing"

            await check(lane, "progress", progress)

            meta: dict[str, Any] | None = None
            if mode == "legacy":

                async def set_level() -> None:
                    await client.set_logging_level("warning")

                await check(lane, "set-logging-level", set_level)
            else:
                meta = {LOG_LEVEL_KEY: "warning"}

            async def warning_delivered() -> None:
                result = await client.call_tool(
                    "log", {"level": "warning", "logger": "lane.warning", "data": "py-warning"}, meta=meta
                )
                expect_equal((result.structured_content or {}).get("sent"), True, "tool result `sent`")
                got = await delivered("py-warning", 2.0)
                expect_equal([(m.level, m.logger) for m in got], [("warning", "lane.warning")], "delivered messages")

            await check(lane, "log-warning-delivered", warning_delivered)

            async def info_dropped() -> None:
                result = await client.call_tool(
                    "log", {"level": "info", "logger": "lane.info", "data": "py-info"}, meta=meta
                )
                expect_equal((result.structured_content or {}).get("sent"), False, "tool result `sent`")
                expect_equal(await delivered("py-info", 0.3), [], "delivered messages")

            await check(lane, "log-info-below-level-dropped", info_dropped)
            if mode != "legacy":

                async def none_without_level() -> None:
                    result = await client.call_tool(
                        "log", {"level": "emergency", "logger": "lane.none", "data": "py-none"}
                    )
                    expect_equal((result.structured_content or {}).get("sent"), False, "tool result `sent`")
                    expect_equal(await delivered("py-none", 0.3), [], "delivered messages")

                await check(lane, "no-log-level-no-message", none_without_level)
    except Exception as error:  # noqa: BLE001
        report(lane, "connect-or-close", error)
    check_teardown(lane, first)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--test-host", required=True)
    args = parser.parse_args()
    with anyio.fail_after(90):
        for mode in ("auto", MODERN, "legacy"):
            await real_server(args.server, mode)
        for mode in ("auto", "legacy"):
            await test_host(args.test_host, mode)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
