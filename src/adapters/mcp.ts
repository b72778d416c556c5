// airlock/mcp: the building blocks of `airlock mcp` and `airlock mcp-proxy`, for people who embed them.

export {
  createMcpProxy,
  type McpProxy,
  type McpProxyOptions,
  type UpstreamSpec,
} from "../mcp/proxy.js";
export {
  loadProxyConfig,
  type ProxyConfig,
  ProxyConfigError,
  type ProxyConfigInput,
  parseProxyConfig,
} from "../mcp/proxy-config.js";
export {
  type CreateMcpServerOptions,
  createMcpServer,
  MCP_TOOLS,
  mcpRequestKey,
} from "../mcp/server.js";
export {
  BOUNDED_WAIT_MS,
  inboxLink,
  maxWaitMs,
  type PendingContent,
  pendingAnswer,
  type WaitBoundedOptions,
  waitBounded,
} from "../mcp/shared.js";
