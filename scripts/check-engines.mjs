// `npm run lint`: every package of package-lock.json runs on the Node.js versions Airlock supports
// (package.json "engines"), except the Agent frameworks that need Node.js 22 themselves.
//
// Why: this repository's .npmrc sets loglevel=error, so that `npm ci` on Node.js 20 does not print
// the EBADENGINE warnings of those frameworks (npm has no setting to silence one package's engine
// warning). This check puts back, precisely, what that setting hides about engines: a new
// dependency that needs a newer Node.js fails the lint instead of warning unseen.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));

/** The dev-only packages allowed to need Node.js 22: the AI SDK and the OpenAI Agents SDK (and
 * their own packages), whose adapters are documented as needing Node.js 22 for that reason. */
const NODE22_FRAMEWORKS = [/^ai$/, /^openai$/, /^@ai-sdk\//, /^@openai\//];

// The lowest version of each supported major (from package.json "engines", e.g. ">=20.19.0").
const supported = pkg.engines?.node;
const floors = ["20", "22", "24"]
  .map((major) => semver.minVersion(semver.validRange(`${supported} ${major}.x`) ?? "<0.0.0-0"))
  .filter((v) => v !== null)
  .map(String);
if (floors.length === 0)
  throw new Error(`package.json engines.node (${supported}) names no version`);

const problems = [];
for (const [path, entry] of Object.entries(lock.packages ?? {})) {
  const range = entry.engines?.node;
  if (path === "" || typeof range !== "string" || entry.optional) continue;
  const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
  const unmet = floors.filter((v) => !semver.satisfies(v, range));
  if (unmet.length === 0) continue;
  if (
    entry.dev &&
    NODE22_FRAMEWORKS.some((re) => re.test(name)) &&
    !unmet.some((v) => semver.gte(v, "22.0.0"))
  ) {
    continue;
  }
  problems.push(`${name}@${entry.version} needs node ${range}: not ${unmet.join(", ")}`);
}
if (problems.length > 0) {
  process.stderr.write(
    `check-engines: packages that do not run on the supported Node.js (${supported}):\n  ${problems.join("\n  ")}\n`,
  );
  process.exit(1);
}
