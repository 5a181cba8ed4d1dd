// Drives an Anvil gateway's /mcp with the TypeScript SDK's clients, as the
// gateway's tests run it (runtime/serve/tsclients_test.go):
//
//   node clients.mjs <v1|v2> <url> <bearer|-> <read tool> <read args JSON> <confirm tool> <confirm args JSON>
//
// v2 is @modelcontextprotocol/client 2.x (it speaks 2026-07-28), v1 is
// @modelcontextprotocol/sdk 1.x (2025-11-25). Both declare form elicitation
// and accept every question. It prints one JSON line: the revision the
// client agreed, the tools listed, the read call's result, the confirmed
// call's result, and the questions it was asked.
const [, , which, url, bearer, readTool, readArgs, confirmTool, confirmArgs] = process.argv;

const headers = bearer && bearer !== '-' ? { Authorization: `Bearer ${bearer}` } : {};
const asked = [];
const answer = (req) => {
  asked.push(req.params.message);
  return { action: 'accept', content: { confirm: true } };
};

let client, transport, version;
if (which === 'v2') {
  const m = await import('@modelcontextprotocol/client');
  client = new m.Client({ name: 'anvil-test-ts-v2', version: '1' }, {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: 'auto' },
  });
  client.setRequestHandler('elicitation/create', async (req) => answer(req));
  transport = new m.StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  version = transport.protocolVersion ?? client.getNegotiatedProtocolVersion?.();
} else {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client = new Client({ name: 'anvil-test-ts-v1', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req));
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  version = transport.protocolVersion;
}
const out = { client: which, version, sessionId: transport.sessionId ?? null };
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.read = await client.callTool({ name: readTool, arguments: JSON.parse(readArgs) });
out.confirmed = await client.callTool({ name: confirmTool, arguments: JSON.parse(confirmArgs) });
out.asked = asked;
await client.close();
console.log(JSON.stringify(out));
