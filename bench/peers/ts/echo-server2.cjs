// The echo tool on the official TypeScript SDK 2.x server package, @modelcontextprotocol/server
// 2.4.0, served over stdio with serveStdio (both revisions: an `initialize` opening selects
// 2025-11-25, a `_meta`-carrying opening selects 2026-07-28). Packages come from
// conformance/node_modules (pinned by conformance/package-lock.json).
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const modules = process.env.BENCH_NODE_PROJECT || path.resolve(__dirname, '../../../conformance');
const load = createRequire(path.join(modules, 'package.json'));
const { McpServer } = load('@modelcontextprotocol/server');
const { serveStdio } = load('@modelcontextprotocol/server/stdio');
const { z } = load('zod');

serveStdio(() => {
  const server = new McpServer(
    { name: 'bench-echo-ts-server', version: '2.4.0' },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    'echo',
    {
      description: 'Returns its text argument.',
      inputSchema: z.object({ text: z.string() }),
      outputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => {
      const structuredContent = { text };
      return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  return server;
});
