"""The echo tool on the official Python SDK (PyPI mcp 2.3.0), served over stdio.

`MCPServer.run()` serves both revisions on one stdio connection: an `initialize` opening
selects 2025-11-25, a request carrying `_meta` selects 2026-07-28. The TypedDict return type
makes the result structured (`structuredContent`, plus the same JSON as text).
"""

from typing import TypedDict

from mcp.server.mcpserver import MCPServer


class Echo(TypedDict):
    text: str


server = MCPServer("bench-echo-python-sdk")


@server.tool(description="Returns its text argument.")
def echo(text: str) -> Echo:
    return {"text": text}


if __name__ == "__main__":
    server.run()
