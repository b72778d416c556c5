// The docs site: VitePress over docs/, with its local search (built into the site, no network).
// `npm run docs` builds it into docs/.vitepress/dist (git-ignored), `npm run docs:dev` serves it.
import { defineConfig } from "vitepress";

const guides = [
  { text: "Getting started", link: "/getting-started" },
  { text: "The inbox and bulk review", link: "/guide/inbox" },
  { text: "Gate a shell command", link: "/guide/shell" },
  { text: "Use it from TypeScript", link: "/guide/typescript" },
  { text: "Use it from Python", link: "/guide/python" },
  { text: "Learned trust", link: "/guide/learned-trust" },
  { text: "MCP", link: "/guide/mcp" },
  { text: "Deploying on PostgreSQL", link: "/guide/deployment" },
  { text: "Storage", link: "/guide/storage" },
  { text: "Audit log", link: "/guide/audit-log" },
  { text: "Security", link: "/guide/security" },
];

const patterns = [
  { text: "1. Research reflection", link: "/patterns/research-reflection" },
  { text: "2. Robot plan review", link: "/patterns/robot-plan" },
  { text: "3. Tools routed by confidence", link: "/patterns/hitl-tools" },
  { text: "4. File writes", link: "/patterns/file-approval" },
  { text: "5. Two-phase research", link: "/patterns/research-two-phase" },
];

const adapters = [
  { text: "Agent frameworks", link: "/adapters/" },
  { text: "LangGraph", link: "/adapters/langgraph" },
  { text: "OpenAI Agents SDK", link: "/adapters/openai-agents" },
  { text: "Vercel AI SDK", link: "/adapters/ai-sdk" },
];

const channels = [
  { text: "Channels and routing", link: "/channels/" },
  { text: "Slack", link: "/channels/slack" },
  { text: "Email", link: "/channels/email" },
  { text: "Webhooks", link: "/channels/webhooks" },
  { text: "Chat: the approval card", link: "/channels/chat" },
];

const reference = [
  { text: "HTTP API", link: "/reference/http-api" },
  { text: "CLI", link: "/reference/cli" },
  { text: "Configuration", link: "/reference/configuration" },
  { text: "Performance", link: "/reference/performance" },
  { text: "Development", link: "/development" },
];

/** Links to the repository outside docs/ (the examples, the sources, the Python client): they work
 * on GitHub and are checked by test/docs/links.test.ts; the site does not serve them. */
const outsideDocs = (url: string): boolean =>
  /^(\.\/)?(\.\.\/)+(README(\.md)?$|(examples|src|clients|test|scripts)\/)/.test(url);

export default defineConfig({
  title: "Airlock",
  description: "Human-in-the-loop approval gates for AI agents",
  lastUpdated: false,
  ignoreDeadLinks: [outsideDocs],
  themeConfig: {
    search: { provider: "local" },
    outline: [2, 3],
    nav: [
      { text: "Guides", link: "/getting-started" },
      { text: "Patterns", link: "/patterns/research-reflection" },
      { text: "Reference", link: "/reference/http-api" },
    ],
    sidebar: [
      { text: "Guides", items: guides },
      { text: "The five patterns", items: patterns },
      { text: "Agent frameworks", items: adapters },
      { text: "Channels", items: channels },
      { text: "Reference", items: reference },
    ],
  },
});
