// The echo tool on the official TypeScript SDK, @modelcontextprotocol/sdk 1.32.2 (legacy revision
// 2025-11-25 only), served over stdio. Packages come from conformance/node_modules (pinned by
// conformance/package-lock.json; installed by scripts/lib/lanes.sh).
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const modules = process.env.BENCH_NODE_PROJECT || path.resolve(__dirname, '../../../conformance');
const load = createRequire(path.join(modules, 'package.json'));
const { McpServer } = load('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = load('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = load('zod');

const server = new McpServer({ name: 'bench-echo-ts-sdk', version: '1.32.2' });
server.registerTool(
  'echo',
  {
    description: 'Returns its text argument.',
    inputSchema: { text: z.string() },
    outputSchema: { text: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => {
    const structuredContent = { text };
    return { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent };
  },
);
server.connect(new StdioServerTransport()).catch((error) => {
  console.error(error);
  process.exit(1);
});
