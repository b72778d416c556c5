// HTML of the email channel, mails and pages alike: every value is escaped here, and pages carry a
// Content-Security-Policy that allows no script and posts forms only to this server.

export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS: Record<string, string> = {
  "content-security-policy": PAGE_CSP,
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#222}" +
  "pre{white-space:pre-wrap;background:#f6f6f6;padding:.75rem;border-radius:4px}" +
  "button{font-size:1rem;padding:.5rem 1.25rem;border-radius:4px;border:1px solid #555;cursor:pointer}" +
  "textarea{width:100%;min-height:4rem}.muted{color:#666}";

/** A whole page around `body` (already escaped HTML). */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

/** A `<pre>` block of plain text. */
export function preformatted(text: string): string {
  return `<pre>${escapeHtml(text)}</pre>`;
}

export function paragraph(text: string, cls?: string): string {
  return cls
    ? `<p class="${escapeHtml(cls)}">${escapeHtml(text)}</p>`
    : `<p>${escapeHtml(text)}</p>`;
}

export function link(href: string, text: string): string {
  return `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
}
