/**
 * The reference page people read at `/` (dist/index.html): built from the same
 * route table and messages as the API and its OpenAPI document. Static HTML
 * with inline CSS: no script, nothing fetched from elsewhere.
 */
import { MESSAGES } from '../src/messages.ts';
import { ALLOWED_METHODS } from '../src/api/reply.ts';
import { MAX_NAME_LENGTH, examplePath, ROUTES, SHAPES, template } from '../src/routes.ts';
import type { Manifest } from '../src/types.ts';

export const PLACEHOLDER_KEY = 'YOUR_KEY';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const code = (s: string) => `<code>${escapeHtml(s)}</code>`;

const CSS = `
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fdfdfb; --muted: #5b5b60; --line: #d9d6cc; --accent: #8a5a00; --code: #f1eee6; }
@media (prefers-color-scheme: dark) { :root { --fg: #ecebe6; --bg: #17171a; --muted: #a8a7a0; --line: #3a3934; --accent: #e6b85c; --code: #26262a; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 68rem; margin: 0 auto; padding: 2rem 1.25rem 4rem; }
h1 { font-size: 2rem; margin: 0 0 .25rem; letter-spacing: -.01em; }
h2 { font-size: 1.3rem; margin: 2.5rem 0 .75rem; padding-bottom: .3rem; border-bottom: 1px solid var(--line); }
p.lead { font-size: 1.15rem; color: var(--muted); margin-top: 0; }
a { color: var(--accent); }
code { font: .9em/1.4 ui-monospace, "SF Mono", Menlo, Consolas, monospace; background: var(--code); padding: .1em .3em; border-radius: 4px; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem .6rem; border-bottom: 1px solid var(--line); }
th { font-size: .85rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
td.id { font-weight: 600; white-space: nowrap; }
nav.links { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1rem 0; }
nav.links a { display: inline-block; padding: .45rem .9rem; border: 1px solid var(--accent); border-radius: 6px; text-decoration: none; font-weight: 600; }
ul { padding-left: 1.2rem; }
li { margin: .3rem 0; }
footer { margin-top: 3rem; color: var(--muted); font-size: .9rem; }
/* A phone has no room for five columns: each row becomes a card of labelled cells. */
@media (max-width: 48rem) {
  main { padding: 1.25rem 1rem 3rem; }
  table, thead, tbody, tr, td { display: block; width: 100%; }
  thead { display: none; } /* each cell carries its column name (data-label) instead */
  tr { padding: .5rem 0; border-bottom: 1px solid var(--line); }
  td { border: 0; padding: .2rem 0; }
  td::before { content: attr(data-label); display: block; font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
  td.id { white-space: normal; }
}
`;

/** The reference page for a built archive. */
/** The footer's sentence naming the source revision served, from what the build recorded. */
function servedRevision(source: Manifest['source'] | undefined): string {
  const revision = source?.revision;
  if (!revision) return '';
  const commit = revision.commit ? ` at commit ${code(revision.commit.slice(0, 12))}` : '';
  return ` Data: ${code('oscars.csv')} of ${escapeHtml(revision.repository)}${commit}${revision.date ? `, ${escapeHtml(revision.date.slice(0, 10))}` : ''}.`;
}

export function referencePage(manifest: Pick<Manifest, 'yearRange'> & Partial<Pick<Manifest, 'source'>>): string {
  const [first, last] = manifest.yearRange;
  const rows = ROUTES.map((route) => {
    const example = examplePath(route, PLACEHOLDER_KEY);
    const aliases = route.roots.slice(1).map((r) => `<br>also ${code(template(route, r))}`).join('');
    const cells = [
      ['Operation', escapeHtml(route.id)],
      ['Path', `${code(template(route))}${aliases}`],
      ['Answers', `${escapeHtml(route.summary)}<br>${code(route.answer)}`],
      ['Example', `<a href="${escapeHtml(example)}">${code(example)}</a>`],
      ['404 message', route.notFound ? escapeHtml(route.notFound) : 'none (this lookup has no 404)'],
    ];
    return `<tr id="${route.id}">${cells.map(([label, html], i) => `<td${i === 0 ? ' class="id"' : ''} data-label="${label}">${html}</td>`).join('')}</tr>`;
  }).join('\n');

  const errors: [number, string, string[]][] = [
    [400, 'A parameter is malformed.', [MESSAGES.badEncoding, MESSAGES.badName, MESSAGES.badYear]],
    [403, 'The key is missing, unknown or revoked.', [MESSAGES.forbidden]],
    [404, 'Nothing matches (the lookup table lists each lookup’s message), or the path is not one of the lookups.', [...new Set(ROUTES.flatMap((r) => (r.notFound ? [r.notFound] : []))), MESSAGES.notFound]],
    [405, `Any method other than ${ALLOWED_METHODS}; the answer carries an Allow header.`, [MESSAGES.methodNotAllowed]],
    [429, 'The key used up its requests for this minute; see Limits.', [MESSAGES.tooMany]],
    [500, 'A stored answer could not be read. Back off and try again later.', [MESSAGES.fetchError]],
  ];
  const errorRows = errors
    .map(([status, why, messages]) => {
      const bodies = messages.map((m) => code(JSON.stringify(status === 429 ? { error: m, limit: '60 requests per minute', retryAfter: 42 } : { error: m }))).join('<br>');
      return `<tr><td class="id" data-label="Status">${status}</td><td data-label="When">${escapeHtml(why)}</td><td data-label="Body">${bodies}</td></tr>`;
    })
    .join('\n');

  const shapeRows = Object.entries(SHAPES)
    .map(([name, shape]) => `<tr id="shape-${name}"><td class="id" data-label="Shape">${escapeHtml(name)}</td><td data-label="JSON">${code(shape)}</td></tr>`)
    .join('\n');

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Film Awards Archive API: reference</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<main>
<h1>Film Awards Archive API</h1>
<p class="lead">Every Academy Awards nomination and winner, for the ceremonies held from ${first} to ${last}, as read-only JSON. Years are the year each ceremony was held (both 1930 ceremonies are <code>1930</code>).</p>
<nav class="links"><a href="/portal">Get an API key</a><a href="/openapi.json">OpenAPI 3.1 document</a></nav>

<h2>Lookups</h2>
<p>Every lookup is a <code>GET</code> (or <code>HEAD</code>). Parameters are whole path segments: the literal text <code>name=</code>, <code>year=</code> or <code>apikey=</code> followed by the value, URL-encoded (<code>encodeURIComponent</code>, so a space is <code>%20</code> and a slash <code>%2F</code>). Names are exact and case-sensitive, 1 to ${MAX_NAME_LENGTH} characters; an award name matches every category containing it. Replace <code>${PLACEHOLDER_KEY}</code> in the examples with your key.</p>
<table>
<thead><tr><th>Operation</th><th>Path</th><th>Answers</th><th>Example</th><th>404 message</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h2>Answers</h2>
<p>JSON without whitespace, keys in the order shown. <code>secondary</code> is always sent (empty when there is nobody else to name); <code>notes</code> only when there is something to say. The <a href="/openapi.json">OpenAPI document</a> has every schema.</p>
<table class="shapes">
<thead><tr><th>Shape</th><th>JSON</th></tr></thead>
<tbody>
${shapeRows}
</tbody>
</table>

<h2>Errors</h2>
<p>Every error is JSON with one <code>error</code> field, exactly as below.</p>
<table>
<thead><tr><th>Status</th><th>When</th><th>Body</th></tr></thead>
<tbody>
${errorRows}
</tbody>
</table>

<h2>Limits</h2>
<ul>
<li>Each key may make <strong>60 requests per minute</strong>. Over that the answer is <code>429</code> with a <code>Retry-After</code> header: wait that many seconds before asking again.</li>
<li>One key per person or application; keep it out of public code and logs. Rotate or revoke it at <a href="/portal">the portal</a>.</li>
</ul>

<h2>Caching etiquette</h2>
<ul>
<li><strong>Cache answers.</strong> The archive changes once a year, after the ceremony. Answers may be kept a day (<code>Cache-Control: private, max-age=86400</code>) and much longer if you revalidate.</li>
<li><strong>Revalidate, don’t re-download.</strong> Every answer has an <code>ETag</code>; send it back in <code>If-None-Match</code> and an unchanged answer comes back as an empty <code>304</code>.</li>
<li><strong>Don’t poll.</strong> There is nothing new to find minute to minute.</li>
<li><strong>Prefer narrow lookups.</strong> Ask for one ceremony or one film rather than the whole archive when that answers your question.</li>
<li><strong>Back off on 500.</strong> Wait, then double the wait on each retry, and give up after a few.</li>
</ul>

<footer>JSON clients asking for <code>/</code> get a machine-readable description instead of this page. Made from the route table the service itself uses.${servedRevision(manifest.source)}</footer>
</main>
</body>
</html>
`;
}
