// The reference page's few behaviours: curl lines on this page's own origin, copy buttons, and the
// "try it" form, which calls the API from the page with the key typed in and shows the answer (for a
// search, as you type).
// The key stays in the form: never stored, never put in this page's URL.
const $ = (id) => document.getElementById(id);
const operations = JSON.parse($('operations').textContent);
const SHOWN_CHARS = 100_000;
const STATUS_TEXT = { 200: 'OK', 304: 'Not Modified', 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

// Curl lines were built for the deploy's address; the page knows the one it is served from.
for (const line of document.querySelectorAll('[data-path]')) line.textContent = `curl "${location.origin}${line.dataset.path}"`;
for (const block of document.querySelectorAll('[data-template]')) block.textContent = block.dataset.template.replaceAll('{{BASE}}', location.origin);

for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const status = button.closest('[data-copy-scope]').querySelector('.copied');
    try {
      await navigator.clipboard.writeText($(button.dataset.copy).textContent);
      status.textContent = 'Copied.';
    } catch {
      status.textContent = 'Copying is blocked here: select the text and copy it by hand.';
    }
  });
}

const form = $('try');
const select = $('try-operation');

/** Shows the inputs the chosen operation takes, filled with its example unless `keep`. */
function choose(id, keep) {
  const operation = operations.find((o) => o.id === id);
  select.value = id;
  // The inputs in the order the path takes them, before the button.
  for (const p of operation.params) form.insertBefore(form.querySelector(`[data-param="${p}"]`), $('try-submit'));
  for (const field of form.querySelectorAll('[data-param]')) {
    const used = operation.params.includes(field.dataset.param);
    field.hidden = !used;
    const input = field.querySelector('input');
    input.required = used;
    if (used && !keep) input.value = operation.example[field.dataset.param] ?? '';
  }
}

select.addEventListener('change', () => choose(select.value, false));
for (const button of document.querySelectorAll('button[data-try]')) {
  button.addEventListener('click', () => {
    choose(button.dataset.try, false);
    $('try-section').scrollIntoView();
    ($('try-key').value ? $('try-send') : $('try-key')).focus();
  });
}

function requestPath(operation, key) {
  const params = operation.params.map((p) => `${p}=${encodeURIComponent(form.querySelector(`[data-param="${p}"] input`).value)}`);
  return `/${[operation.root, ...params, `apikey=${encodeURIComponent(key)}`].join('/')}`;
}

function show(status, text, path) {
  const line = $('try-status');
  line.textContent = status === 0 ? 'No answer: the request did not reach the API.' : `HTTP ${status} ${STATUS_TEXT[status] ?? ''}`.trim();
  line.className = status >= 200 && status < 300 ? 'ok' : 'bad';
  $('try-request').textContent = `GET ${path.replace(/apikey=([^/]{0,12})[^/]*$/, 'apikey=$1…')}`;
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // not JSON: shown as it came
  }
  $('try-body').textContent = pretty.length > SHOWN_CHARS ? `${pretty.slice(0, SHOWN_CHARS)}\n… (the first ${SHOWN_CHARS} of ${pretty.length} characters)` : pretty;
  $('try-result').hidden = false;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const operation = operations.find((o) => o.id === select.value);
  const path = requestPath(operation, $('try-key').value.trim());
  $('try-send').disabled = true;
  try {
    const response = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
    show(response.status, await response.text(), path);
  } catch {
    show(0, '', path);
  } finally {
    $('try-send').disabled = false;
    $('try-status').focus();
  }
});

// Search answers as you type: once the typing pauses (so a word costs one request of the key's 60 a
// minute, not one a letter), with a key given; an answer overtaken by newer text is dropped. Focus
// stays in the field.
let typed = 0;
let pause;
form.querySelector('[data-param="name"] input').addEventListener('input', (event) => {
  clearTimeout(pause);
  const text = event.target.value;
  const key = $('try-key').value.trim();
  if (select.value !== 'search' || text.trim() === '' || key === '') return;
  pause = setTimeout(async () => {
    const asked = ++typed;
    const path = requestPath(operations.find((o) => o.id === 'search'), key);
    try {
      const response = await fetch(path, { headers: { accept: 'application/json' }, credentials: 'omit' });
      const body = await response.text();
      if (asked === typed) show(response.status, body, path);
    } catch {
      if (asked === typed) show(0, '', path);
    }
  }, 350);
});

choose(select.value, true);
