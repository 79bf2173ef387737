// The legacy-only TypeScript SDK @modelcontextprotocol/sdk 1.32.2 over stdio: initialize at
// 2025-11-25 against the real server (tools/list, beam_version, ping, teardown) and the test host
// (logging/setLevel, progress, teardown).
//
//   node legacy-sdk-client.mjs --server PATH --test-host PATH
//
// Prints `PASS <lane>/<check>` or `FAIL <lane>/<check>: reason` per check; exits 1 on any FAIL.

import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Checks,
  LEGACY,
  MODERN,
  checkProgress,
  checkTeardown,
  collectStderr,
  expect,
  expectEqual,
  logCall,
  recordWire,
} from './common.mjs';

const { values: args } = parseArgs({
  options: {
    server: { type: 'string' },
    'test-host': { type: 'string' },
  },
});
const REQUEST = { timeout: 10_000 };

function connectTo(command) {
  const transport = new StdioClientTransport({ command, args: [], stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  const stderr = collectStderr(transport);
  const wire = recordWire(transport);
  const client = new Client({ name: 'lean-beam-mcp-legacy-sdk-lane', version: '0.0.0' });
  const errors = [];
  client.onerror = (error) => errors.push(error);
  return { transport, stderr, wire, client };
}

async function connectLegacy(checks, client, transport, wire) {
  if (!(await checks.check('connect', () => client.connect(transport, REQUEST)))) return false;
  await checks.check('initialize-version', () => {
    const init = wire.outbound.find((m) => m.method === 'initialize');
    expectEqual(init?.params?.protocolVersion, LEGACY, 'requested protocolVersion');
    const reply = wire.inbound.find((m) => m.id === init.id);
    expectEqual(reply?.result?.protocolVersion, LEGACY, 'initialize result protocolVersion');
    const sent = wire.outbound.map((m) => m.method).filter(Boolean);
    expectEqual(sent.slice(0, 2), ['initialize', 'notifications/initialized'], 'handshake');
  });
  return true;
}

async function realServer() {
  const checks = new Checks('ts-sdk-1.32.2/legacy/server');
  const { transport, stderr, wire, client } = connectTo(args.server);
  if (!(await connectLegacy(checks, client, transport, wire))) return checks;
  await checks.check('server-info', () => expectEqual(client.getServerVersion()?.name, 'lean-beam-mcp', 'serverInfo.name'));
  await checks.check('ping', () => client.ping(REQUEST));
  await checks.check('tools-list', async () => {
    const { tools } = await client.listTools(undefined, REQUEST);
    const names = tools.map((t) => t.name);
    expect(names.includes('beam_version'), `beam_version missing from ${JSON.stringify(names)}`);
    return names.join(', ');
  });
  await checks.check('beam-version-call', async () => {
    const result = await client.callTool({ name: 'beam_version', arguments: {} }, CallToolResultSchema, REQUEST);
    expect(!result.isError, `isError: ${JSON.stringify(result.content)}`);
    // mcp_protocol names the server's preferred revision, whichever family the client speaks.
    expectEqual(result.structuredContent?.mcp_protocol, MODERN, 'structuredContent.mcp_protocol');
    expectEqual(result.content?.[0]?.type, 'text', 'content[0].type');
    expectEqual(JSON.parse(result.content[0].text), result.structuredContent, 'content[0].text as JSON');
  });
  await checks.check('no-modern-envelope', () => {
    const stamped = wire.outbound.filter((m) => m.params?._meta?.['io.modelcontextprotocol/protocolVersion']);
    expectEqual(stamped.map((m) => m.method), [], 'requests carrying a modern _meta');
  });
  await checkTeardown(checks, 'teardown', client, transport, stderr);
  return checks;
}

async function testHost() {
  const checks = new Checks('ts-sdk-1.32.2/legacy/test-host');
  const { transport, stderr, wire, client } = connectTo(args['test-host']);
  const messages = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification);
  });
  if (!(await connectLegacy(checks, client, transport, wire))) return checks;
  await checkProgress(checks, 'progress', wire, (steps, onprogress) =>
    client.callTool({ name: 'progress', arguments: { steps } }, CallToolResultSchema, { ...REQUEST, onprogress }),
  );
  const call = (params) => client.callTool(params, CallToolResultSchema, REQUEST);
  await checks.check('set-logging-level', () => client.setLoggingLevel('warning', REQUEST));
  await checks.check('session-level-warning-delivers-warning', async () => {
    const { result, delivered } = await logCall(client, messages, call, {
      level: 'warning',
      logger: 'lane.warning',
      expectDelivery: true,
    });
    expectEqual(result.structuredContent?.sent, true, 'tool result `sent`');
    expectEqual(delivered.length, 1, 'notifications/message delivered to the handler');
    expectEqual(delivered[0].params.level, 'warning', 'delivered level');
  });
  await checks.check('session-level-warning-drops-info', async () => {
    const { result, delivered } = await logCall(client, messages, call, {
      level: 'info',
      logger: 'lane.info',
      expectDelivery: false,
    });
    expectEqual(result.structuredContent?.sent, false, 'tool result `sent`');
    expectEqual(delivered.length, 0, 'notifications/message delivered');
  });
  await checkTeardown(checks, 'teardown', client, transport, stderr);
  return checks;
}

const watchdog = setTimeout(() => {
  console.log('FAIL ts-sdk-1.32.2/legacy/watchdog: the lane did not finish within 90 s');
  process.exit(1);
}, 90_000);
watchdog.unref();

let failed = 0;
for (const part of [realServer, testHost]) {
  const checks = await part();
  failed += checks.failed;
}
process.exitCode = failed > 0 ? 1 : 0;
