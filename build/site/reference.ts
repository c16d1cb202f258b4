/**
 * The reference page people read at `/` (dist/index.html): built from the same
 * route table and messages as the API and its OpenAPI document, so a route
 * added to src/shared/routes.ts gets its section, its curl line and its place in the
 * "try it" form without an edit here. Each operation shows a real example
 * answer, taken from the build's own output (build/site/examples.ts). The page's
 * CSS and script (build/site/reference/) are inlined: one file, nothing fetched
 * from elsewhere. The script fills in curl lines for the page's own origin,
 * copies them, and sends the "try it" form's request from the page.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { escapeHtml } from '../../src/shared/html.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import { HEALTH_PATH } from '../../src/http/request.ts';
import { ALLOWED_METHODS } from '../../src/http/reply.ts';
import {
  ID_FORMS,
  MAX_NAME_LENGTH,
  examplePath,
  type Route,
  ROUTES,
  SHAPES,
  template,
} from '../../src/shared/routes.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { RANKING } from '../../src/client/client.ts';
import { abridgedJson, type ExampleAnswer, type ExampleAnswers } from './examples.ts';

export const PLACEHOLDER_KEY = 'YOUR_KEY';

/** The client call that asks what an operation's example asks: its method, with the example's parameters in order. */
function clientCall(route: Route): string {
  const text = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  return `${route.client}(${route.params.map((p) => (p === 'year' ? route.example.year : text(route.example[p] ?? ''))).join(', ')})`;
}

/**
 * The example request in JavaScript (fetch), Python and the client; `{{BASE}}`
 * is where the API is served (the page's script puts in its own origin).
 */
function codeExamples(route: Route): [string, string][] {
  const url = `{{BASE}}${examplePath(route, PLACEHOLDER_KEY)}`;
  const file = route.example.file;
  if (file) {
    return [
      [
        'JavaScript (fetch)',
        `import { writeFile } from 'node:fs/promises';\n\nconst response = await fetch('${url}');\nawait writeFile('${file}', new Uint8Array(await response.arrayBuffer()));`,
      ],
      ['Python', `import urllib.request\n\nurllib.request.urlretrieve('${url}', '${file}')`],
      [
        'The client',
        `import { createClient } from 'film-awards-archive-client';\n\nconst api = createClient({ baseUrl: '{{BASE}}', apiKey: '${PLACEHOLDER_KEY}' });\nconst bytes = await api.${clientCall(route)}; // checked against the list's sha256`,
      ],
    ];
  }
  return [
    [
      'JavaScript (fetch)',
      `const response = await fetch('${url}');\nconsole.log(JSON.stringify(await response.json(), null, 2));`,
    ],
    [
      'Python',
      `import json, urllib.request\n\nwith urllib.request.urlopen('${url}') as response:\n    print(json.dumps(json.load(response), indent=2, ensure_ascii=False))`,
    ],
    [
      'The client',
      `import { createClient } from 'film-awards-archive-client';\n\nconst api = createClient({ baseUrl: '{{BASE}}', apiKey: '${PLACEHOLDER_KEY}' });\nconsole.log(JSON.stringify(await api.${clientCall(route)}, null, 2));`,
    ],
  ];
}

/** The other languages' examples, folded under the curl line. */
function codeBlock(route: Route, baseUrl: string): string {
  const blocks = codeExamples(route).map(
    ([language, template], i) =>
      `<p class="label"><span>${escapeHtml(language)}</span></p>\n<pre class="code" id="code-${route.id}-${i}" data-language="${escapeHtml(language)}" data-template="${escapeHtml(template)}">${escapeHtml(template.replaceAll('{{BASE}}', baseUrl))}</pre>`,
  );
  return `<details class="languages"><summary>In JavaScript, Python and the client</summary>\n${blocks.join('\n')}\n</details>`;
}
const SOURCE = path.join(import.meta.dirname, 'reference');

export interface ReferenceOptions {
  /** Each operation's example answer, from the built files; an operation without one shows none. */
  examples?: ExampleAnswers;
  /**
   * Where the API is served (PUBLIC_BASE_URL), for curl lines read without the page's script; default a placeholder.
   */
  baseUrl?: string;
  /** The README's section on the client package, where the repository's address is known. */
  clientUrl?: string;
}

const code = (s: string) => `<code>${escapeHtml(s)}</code>`;
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  404: 'Not Found',
  403: 'Forbidden',
  400: 'Bad Request',
  500: 'Internal Server Error',
};
/** Text with `backquoted` parts set as code. */
const withCode = (s: string) => escapeHtml(s).replace(/`([^`]*)`/g, '<code>$1</code>');

/** A curl line (the script puts the page's own origin in) with its copy button. */
function curlBlock(id: string, requestPath: string, baseUrl: string): string {
  return `<div class="curl-block" data-copy-scope>
<p class="label"><span>Request</span><button type="button" class="quiet" data-copy="curl-${id}" aria-label="Copy the curl line for ${escapeHtml(id)}">Copy</button></p>
<pre id="curl-${id}" data-path="${escapeHtml(requestPath)}">${escapeHtml(`curl "${baseUrl}${requestPath}"`)}</pre>
<p class="copied" role="status"></p>
</div>`;
}

/** Installing the client package and a first lookup with it, against `baseUrl`. */
const CLIENT_EXAMPLE = (baseUrl: string) => `npm install ./film-awards-archive-client-*.tgz

import { createClient } from 'film-awards-archive-client';
const api = createClient({ baseUrl: '${baseUrl}', apiKey: 'YOUR_KEY' });
for (const { year, category, nomination } of await api.person('Meryl Streep')) {
  console.log(year, category, nomination.won ? 'won' : '');
}`;

/** The example answer, status line first, abridged where long. */
function answerBlock(id: string, answer: ExampleAnswer | undefined): string {
  if (!answer) return '';
  const { text, abridged } = abridgedJson(answer.body);
  const label = `Example answer${abridged ? ' (abridged: <code>… N more</code> marks what is left out)' : ''}`;
  return `<p class="label"><span>${label}</span></p>
<pre class="answer" id="answer-${id}" tabindex="0">${escapeHtml(`HTTP ${answer.status} ${STATUS_TEXT[answer.status] ?? ''}`.trim())}\n${escapeHtml(text)}</pre>`;
}

/** The footer's sentence naming the source revision served, from what the build recorded. */
function servedRevision(source: Manifest['source'] | undefined): string {
  const revision = source?.revision;
  if (!revision) return '';
  const commit = revision.commit ? ` at commit ${code(revision.commit.slice(0, 12))}` : '';
  return ` Data: ${code('oscars.csv')} of ${escapeHtml(revision.repository)}${commit}${revision.date ? `, ${escapeHtml(revision.date.slice(0, 10))}` : ''}.`;
}

/** The questions people ask of awards history, each one ranking (issue #54; docs/rankings.md gives their first entries). */
export const RANKING_QUESTIONS: [question: string, path: string][] = [
  ['Who has won the most acting Oscars since 2000?', '/rankings/of=people/by=wins/class=Acting/from=2000'],
  ['The most acting nominations without a win', '/rankings/of=people/class=Acting/won=no'],
  ['The most nominated films (competitive classes)', '/rankings/of=films/class=competitive'],
  ['The most nominated films without a win', '/rankings/of=films/won=no'],
  ['The most nominated people', '/rankings/of=people'],
  ['The most nominated companies', '/rankings/of=companies'],
  ['The most wins at one ceremony', '/rankings/of=films/by=wins/per=ceremony'],
  ['The winners of the 2026 ceremony', '/rankings/of=films/by=wins/from=2026/to=2026/won=yes'],
  ['The most Best Director wins', '/rankings/of=people/by=wins/class=Directing'],
  ['The most Original Song nominations', '/rankings/of=people/award=music-original-song'],
];

/** A ranking's segments and the questions it answers in one call each. */
function rankingFacts(route: Route): string {
  if (!route.options) return '';
  const segments = `<p>Segments <code>name=value</code>, any of them, in any order, each once: ${route.options.map((o) => code(`${o}=`)).join(', ')}. <code>of</code> is <code>people</code> (the default), <code>companies</code> or <code>films</code>; <code>by</code> is <code>nominations</code> (the default) or <code>wins</code>; <code>class</code> a class (${RANKING.classes.map(code).join(', ')}) or <code>competitive</code>; <code>award</code> an award id; <code>from</code> and <code>to</code> held years; <code>won</code> <code>yes</code> or <code>no</code>; <code>per</code> <code>ceremony</code>; <code>limit</code> 1 to ${RANKING.maxLimit} (default ${RANKING.limit}). Ties share a rank (1, 2, 2, 4); over all years a rank is the one the thing's record gives. A bad segment answers 400 naming it.</p>`;
  return `${segments}\n<ul class="questions">${RANKING_QUESTIONS.map(([q, path]) => `<li>${escapeHtml(q)}: ${code(`${path}/apikey=${PLACEHOLDER_KEY}`)}</li>`).join('')}</ul>`;
}

function operationSection(
  route: Route,
  options: Required<Pick<ReferenceOptions, 'baseUrl'>> & ReferenceOptions,
): string {
  const shapeName = route.answer.replace(/\[\]$/, '');
  const aliases = route.roots
    .slice(1)
    .map((r) => `<br>also ${code(template(route, r))}`)
    .join('');
  const facts: [string, string][] = [
    ['Path', `${code(template(route))}${aliases}`],
    [
      'Answers',
      route.answer === 'file'
        ? 'the file itself (SQLite, NDJSON or CSV), with its ETag; <code>Range</code> resumes a download (206, or 416 past its end)'
        : `<a href="#shape-${escapeHtml(shapeName)}">${code(route.answer)}</a>`,
    ],
    ['404 message', route.notFound ? code(JSON.stringify({ error: route.notFound })) : 'none (this lookup has no 404)'],
  ];
  return `<section class="operation" id="${route.id}" aria-labelledby="title-${route.id}">
<h3 id="title-${route.id}">${escapeHtml(route.title)}</h3>
<p class="operation-id">Operation <code>${escapeHtml(route.id)}</code></p>
<p class="summary">${escapeHtml(route.summary)}</p>
${rankingFacts(route)}<dl class="facts">${facts.map(([term, html]) => `<dt>${term}</dt><dd>${html}</dd>`).join('')}</dl>
${curlBlock(route.id, examplePath(route, PLACEHOLDER_KEY), options.baseUrl)}
${codeBlock(route, options.baseUrl)}
${answerBlock(route.id, options.examples?.[route.id])}
${route.answer === 'file' ? '' : `<p><button type="button" class="quiet" data-try="${route.id}">Try ${escapeHtml(route.id)} with your key</button></p>\n`}</section>`;
}

/** The "try it" form: one input per parameter any route takes, shown for the operations that take it. */
function tryForm(): string {
  const params = [...new Set(ROUTES.flatMap((r) => r.params))];
  const options = ROUTES.map(
    (r) => `<option value="${r.id}">${escapeHtml(`${r.title}: ${template(r)}`)}</option>`,
  ).join('');
  const fields = params
    .map(
      (p) =>
        `<div data-param="${p}"><label for="try-${p}">${escapeHtml(p)}</label><input id="try-${p}" name="${p}" autocomplete="off" spellcheck="false"></div>`,
    )
    .join('\n');
  const operations = ROUTES.map((r) => ({ id: r.id, root: r.roots[0], params: r.params, example: r.example }));
  return `<section id="try-section" aria-labelledby="try-title">
<h2 id="try-title">Try it</h2>
<p>Sends the request from this page, with your key, and shows the answer as it came. The key stays in this form: it is not stored, and it is cut from the request shown below.</p>
<form class="try" id="try">
<div class="wide"><label for="try-key">API key</label><input id="try-key" name="key" type="password" autocomplete="off" spellcheck="false" required placeholder="faa_…"></div>
<div class="wide"><label for="try-operation">Operation</label><select id="try-operation" name="operation">${options}</select></div>
${fields}
<div id="try-submit"><button type="submit" id="try-send">Send request</button></div>
</form>
<div id="try-result" aria-live="polite" hidden>
<p id="try-status" tabindex="-1"></p>
<pre id="try-request"></pre>
<p class="label"><span>Answer body</span></p>
<pre class="answer" id="try-body" tabindex="0"></pre>
</div>
<script type="application/json" id="operations">${JSON.stringify(operations).replace(/</g, '\\u003c')}</script>
</section>`;
}

function errorTable(): string {
  const errors: [number, string, string[]][] = [
    [
      400,
      'A parameter is malformed.',
      [MESSAGES.badEncoding, MESSAGES.badName, MESSAGES.badYear, MESSAGES.badTitleId, MESSAGES.badNameId],
    ],
    [
      403,
      'The key is missing, unknown or revoked (a rotated key: from the end of its grace period).',
      [MESSAGES.forbidden],
    ],
    [
      404,
      'Nothing matches (each operation shows its message), or the path is not one of the lookups.',
      [...new Set(ROUTES.flatMap((r) => (r.notFound ? [r.notFound] : []))), MESSAGES.notFound],
    ],
    [405, `Any method other than ${ALLOWED_METHODS}; the answer carries an Allow header.`, [MESSAGES.methodNotAllowed]],
    [429, 'The key used up its requests for this minute; see Limits.', [MESSAGES.tooMany]],
    [500, 'A stored answer could not be read. Back off and try again later.', [MESSAGES.fetchError]],
    [
      503,
      `${HEALTH_PATH}: this instance cannot read the archive, or its key store. A lookup: its key could not be checked, because the key store cannot be reached now (a self-hosted server whose database is down); try again after Retry-After.`,
      [MESSAGES.unavailable, MESSAGES.keysUnavailable],
    ],
  ];
  const rows = errors.map(([status, why, messages]) => {
    const bodies = messages
      .map((m) =>
        code(
          JSON.stringify(status === 429 ? { error: m, limit: '60 requests per minute', retryAfter: 42 } : { error: m }),
        ),
      )
      .join('<br>');
    return `<tr><td class="id" data-label="Status">${status}</td><td data-label="When">${escapeHtml(why)}</td><td data-label="Body">${bodies}</td></tr>`;
  });
  return `<table>
<thead><tr><th>Status</th><th>When</th><th>Body</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function shapeTable(): string {
  const rows = Object.entries(SHAPES).map(
    ([name, shape]) =>
      `<tr id="shape-${name}"><td class="id" data-label="Shape">${escapeHtml(name)}</td><td data-label="JSON">${code(shape)}</td></tr>`,
  );
  return `<table class="shapes">
<thead><tr><th>Shape</th><th>JSON</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

/** The page's contents: its sections and every operation, a side menu on a wide screen. */
function contents(): string {
  const link = (id: string, text: string) => `<li><a href="#${id}">${escapeHtml(text)}</a></li>`;
  return `<nav class="contents" aria-label="Contents">
<p class="contents-title">Contents</p>
<ol>
${link('try-section', 'Try it')}
<li><a href="#lookups">Lookups</a>
<ol>
${ROUTES.map((r) => link(r.id, r.title)).join('\n')}
${link('health', 'Health of this instance')}
</ol></li>
${link('answers', 'Answers')}
${link('errors', 'Errors')}
${link('limits', 'Limits')}
${link('caching', 'Caching etiquette')}
${link('client', 'Client')}
</ol>
</nav>`;
}

/** The reference page for a built archive. */
export function referencePage(
  manifest: Pick<Manifest, 'yearRange'> & Partial<Pick<Manifest, 'source'>>,
  options: ReferenceOptions = {},
): string {
  const [first, last] = manifest.yearRange;
  const all = { ...options, baseUrl: (options.baseUrl ?? 'https://your-site.example').replace(/\/+$/, '') };
  const client = '<a href="#client">Typed client</a>';
  const css = readFileSync(path.join(SOURCE, 'reference.css'), 'utf8');
  const script = readFileSync(path.join(SOURCE, 'reference.js'), 'utf8');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Film Awards Archive API: reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>${css}</style>
</head>
<body>
<div class="layout">
${contents()}
<main>
<h1>Film Awards Archive API</h1>
<p class="lead">Every Academy Awards nomination and winner, for the ceremonies held from ${first} to ${last}, as read-only JSON. Years are the year each ceremony was held (both 1930 ceremonies are <code>1930</code>).</p>
<nav class="links" aria-label="Elsewhere"><a href="/portal">Get an API key</a><a href="/openapi.json">OpenAPI 3.1 document</a>${client}<a href="${HEALTH_PATH}">Health</a></nav>

${tryForm()}

<h2 id="lookups">Lookups</h2>
<p>Every lookup is a <code>GET</code> (or <code>HEAD</code>). Parameters are whole path segments: the literal text <code>name=</code>, <code>year=</code> or <code>apikey=</code> followed by the value, URL-encoded (<code>encodeURIComponent</code>, so a space is <code>%20</code> and a slash <code>%2F</code>). Names are exact and case-sensitive, 1 to ${MAX_NAME_LENGTH} characters; an award name matches every category containing it. Replace <code>${PLACEHOLDER_KEY}</code> in the curl lines with your key. The example answers are the archive's own, from the build that made this page.</p>
<p>${escapeHtml(
    ROUTES.filter((r) => r.params.includes('id') && r.id !== 'awardRecord')
      .map((r) => r.id)
      .join(', '),
  )} take an IMDb id in the segment <code>id=</code>: ${withCode(ID_FORMS.titleById.expected)} for a film; ${withCode(ID_FORMS.nameById.expected)} for a person or company. The id lookups answer every nomination whose source record carries that id; the records (<code>/film</code>, <code>/people</code>) also the nominations that credit the same name without an id where exactly one id is credited with it. Films and people the source has no id for are found by name, and in their ceremony's and award's records. An award's id (<code>/awards/id=</code>) is ${withCode(ID_FORMS.awardRecord.expected)}.</p>
${ROUTES.map((route) => operationSection(route, all)).join('\n')}

<section class="operation" id="health" aria-labelledby="title-health">
<h3 id="title-health">Health of this instance</h3>
<p class="operation-id">Operation <code>health</code></p>
<p class="summary">Whether this instance can answer lookups, with the source's revision (its sha256) and the archive's counts. No key, no archive data, never cached; <code>503</code> when the archive or the key store cannot be read.</p>
${curlBlock('health', HEALTH_PATH, all.baseUrl)}
${answerBlock('health', options.examples?.health)}
</section>

<h2 id="answers">Answers</h2>
<p>JSON without whitespace, keys in the order shown (the examples above are indented for reading). <code>secondary</code> is always sent (empty when there is nobody else to name); <code>notes</code> only when there is something to say. The <a href="/openapi.json">OpenAPI document</a> has every schema.</p>
${shapeTable()}

<h2 id="errors">Errors</h2>
<p>Every error is JSON with one <code>error</code> field, exactly as below.</p>
${errorTable()}

<h2 id="limits">Limits</h2>
<ul>
<li>Each key may make <strong>60 requests per minute</strong>. Over that the answer is <code>429</code> with a <code>Retry-After</code> header: wait that many seconds before asking again.</li>
<li>One key per person or application; keep it out of public code and logs. Rotate or revoke it at <a href="/portal">the portal</a>.</li>
<li>Rotating can leave the old key a grace period (now, 1 hour, 24 hours or 7 days; choose now for a key that leaked): both keys answer until its end, when the old one stops on its own, and the portal can stop it sooner. Answers for a key in its grace period carry a <code>max-age</code> no longer than the time it has left.</li>
</ul>

<h2 id="caching">Caching etiquette</h2>
<ul>
<li><strong>Cache answers.</strong> The archive changes once a year, after the ceremony. Answers may be kept a day (<code>Cache-Control: private, max-age=86400</code>) and much longer if you revalidate.</li>
<li><strong>Revalidate, don’t re-download.</strong> Every answer has an <code>ETag</code>; send it back in <code>If-None-Match</code> and an unchanged answer comes back as an empty <code>304</code>.</li>
<li><strong>Don’t poll.</strong> There is nothing new to find minute to minute.</li>
<li><strong>Prefer narrow lookups.</strong> Ask for one ceremony or one film rather than the whole archive when that answers your question.</li>
<li><strong>Back off on 500.</strong> Wait, then double the wait on each retry, and give up after a few.</li>
</ul>

<section id="client" aria-labelledby="client-title">
<h2 id="client-title">Client</h2>
<p>A typed client for Node 24, Deno and browsers (<code>film-awards-archive-client</code>: JavaScript with type declarations, no dependencies) caches answers with their ETags, waits out <code>Retry-After</code> and never logs your key. In a checkout of the service, <code>npm run pack:client</code> builds it and prints its tarball; install that file in your project:</p>
<pre>${escapeHtml(CLIENT_EXAMPLE(all.baseUrl))}</pre>
<p>${options.clientUrl ? `More in <a href="${escapeHtml(options.clientUrl)}">the README’s section on the client</a>. ` : ''}Or generate a client of your own from the <a href="/openapi.json">OpenAPI document</a>.</p>
</section>

<footer>JSON clients asking for <code>/</code> get a machine-readable description instead of this page. Made from the route table the service itself uses.${servedRevision(manifest.source)}</footer>
</main>
</div>
<script>${script}</script>
</body>
</html>
`;
}
