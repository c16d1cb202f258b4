// The key portal page: three forms posting JSON to /portal/keys*, answers read aloud through aria-live regions.
const EXAMPLE_PATH = '/archive/year=2026/apikey=';

function errorText(status, body) {
  if (body && typeof body.error === 'string') {
    return status === 429 && body.retryAfter ? `${body.error}: try again in ${body.retryAfter} s.` : body.error;
  }
  return `The portal answered ${status}. Try again in a minute.`;
}

async function post(path, payload) {
  let response;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    return { ok: false, error: 'Could not reach the portal: check your connection and try again.' };
  }
  const body = await response.json().catch(() => null);
  return response.ok ? { ok: true, body } : { ok: false, error: errorText(response.status, body) };
}

function showError(result, message) {
  const p = document.createElement('p');
  p.className = 'error';
  p.textContent = message;
  result.replaceChildren(p);
}

function showKey(result, title, key) {
  const box = document.getElementById('key-template').content.firstElementChild.cloneNode(true);
  const example = `${location.origin}${EXAMPLE_PATH}${key}`;
  box.querySelector('[data-slot="title"]').textContent = title;
  box.querySelector('[data-slot="key"]').textContent = key;
  box.querySelector('[data-slot="example"]').textContent = example;
  const status = box.querySelector('[data-slot="status"]');
  for (const button of box.querySelectorAll('[data-copy]')) {
    const text = button.dataset.copy === 'key' ? key : example;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(text);
        status.textContent = button.dataset.copy === 'key' ? 'Key copied.' : 'URL copied.';
      } catch {
        const code = button.previousElementSibling;
        getSelection().selectAllChildren(code);
        status.textContent = 'Copying is blocked here: the text is selected, press Ctrl+C (or ⌘C).';
      }
    });
  }
  result.replaceChildren(box);
}

function wire(formId, handle) {
  const form = document.getElementById(formId);
  const result = document.getElementById(formId.replace('-form', '-result'));
  const input = form.querySelector('input');
  const button = form.querySelector('button[type="submit"]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = input.value.trim();
    if (!value) {
      showError(result, input.type === 'email' ? 'Enter your e-mail address.' : 'Paste your current key.');
      input.focus();
      return;
    }
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      await handle(value, result, input);
    } finally {
      button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
}

wire('get-form', async (email, result) => {
  const answer = await post('/portal/keys', { email });
  if (answer.ok) showKey(result, `Your key for ${email}:`, answer.body.apiKey);
  else showError(result, answer.error);
});

wire('rotate-form', async (apiKey, result, input) => {
  const answer = await post('/portal/keys/rotate', { apiKey });
  if (answer.ok) {
    input.value = '';
    showKey(result, 'Your new key (the old one no longer works):', answer.body.apiKey);
  } else showError(result, answer.error);
});

wire('revoke-form', async (apiKey, result, input) => {
  const answer = await post('/portal/keys/revoke', { apiKey });
  if (answer.ok) {
    input.value = '';
    const p = document.createElement('p');
    p.className = 'ok';
    p.textContent = 'Key revoked: it no longer works. You can get a new key for the same address above.';
    result.replaceChildren(p);
  } else showError(result, answer.error);
});
