// The key portal page: sign in by e-mail link, then get, rotate or revoke the key with the session
// the link opens; the link's token leaves the URL at once. Rotate and Revoke ask first, in a dialog;
// Rotate asks there how long the old key may go on working (now by default, 1 h, 24 h, 7 days),
// and while it does the page shows it, its end, and "Stop the old key now".
//
// The session token is kept in sessionStorage so that a reload keeps the person signed in (the
// server still ends every session within the hour). Not localStorage: sessionStorage belongs to
// this one tab and is gone when the tab closes, so the token is not left on disk for the next
// person at a shared computer, nor handed to every other tab of the origin. Sign out ends the
// session on the server, then forgets it here.
const EXAMPLE_PATH = '/archive/year=2026/apikey=';
const STORED = 'portal-session';
const $ = (id) => document.getElementById(id);
let session = null;

function remember(token) {
  try {
    if (token) sessionStorage.setItem(STORED, token);
    else sessionStorage.removeItem(STORED);
  } catch {
    // storage refused (private mode, policy): the session then lasts until the page is left
  }
}

function stored() {
  try {
    return sessionStorage.getItem(STORED);
  } catch {
    return null;
  }
}

function errorText(status, body) {
  if (body && typeof body.error === 'string') {
    return status === 429 && body.retryAfter ? `${body.error}: try again in ${body.retryAfter} s.` : body.error;
  }
  return `The portal answered ${status}. Try again in a minute.`;
}

async function post(path, payload) {
  const headers = { accept: 'application/json' };
  if (payload) headers['content-type'] = 'application/json';
  if (session) headers.authorization = `Bearer ${session.session}`;
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers, body: payload ? JSON.stringify(payload) : undefined, credentials: 'omit', cache: 'no-store' });
  } catch {
    return { ok: false, status: 0, error: 'Could not reach the portal: check your connection and try again.' };
  }
  const body = await response.json().catch(() => null);
  return response.ok ? { ok: true, status: response.status, body } : { ok: false, status: response.status, error: errorText(response.status, body) };
}

function say(result, message, kind) {
  const p = document.createElement('p');
  p.className = kind;
  p.textContent = message;
  result.replaceChildren(p);
  result.focus();
}

function showKey(title, key) {
  const box = $('key-template').content.firstElementChild.cloneNode(true);
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
        getSelection().selectAllChildren(button.previousElementSibling);
        status.textContent = 'Copying is blocked here: the text is selected, press Ctrl+C (or ⌘C).';
      }
    });
  }
  $('account-result').replaceChildren(box);
  box.querySelector('[data-slot="title"]').focus();
}

/** The old key in its grace period, while its end is still to come. */
const ending = () => (session.ending && Date.parse(session.ending.endsAt) > Date.now() ? session.ending : null);

function showState() {
  const key = session.key;
  $('account-title').textContent = `Signed in as ${session.email}`;
  $('key-state').textContent = key
    ? `Your active key starts ${key.id}… and was issued ${new Date(key.createdAt).toLocaleString()}.`
    : 'You have no active key.';
  const old = ending();
  $('ending').hidden = !old;
  if (old) $('ending-state').textContent = `Your old key ${old.id}… keeps working until ${new Date(old.endsAt).toLocaleString()}, then stops on its own.`;
  $('issue').hidden = Boolean(key);
  $('rotate').hidden = !key;
  $('revoke').hidden = !key;
}

function signedOut(message, kind = 'error') {
  session = null;
  remember(null);
  $('account').hidden = true;
  $('sign-in').hidden = false;
  say($('sign-in-result'), message, kind);
}

function signedIn(account) {
  session = account;
  remember(account.session);
  $('sign-in').hidden = true;
  $('account').hidden = false;
  showState();
  $('account-title').focus();
}

/** Asks before an action that stops a key: resolves true only when the person confirms. With `grace`, it also asks when the old key stops (`chosenGrace`). */
function confirmed(title, text, yes, grace = false) {
  const dialog = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-yes').textContent = yes;
  $('grace').hidden = !grace;
  dialog.querySelector('input[name="grace"][value="now"]').checked = true;
  dialog.returnValue = '';
  dialog.showModal();
  $('confirm-cancel').focus();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'yes'), { once: true }));
}

const chosenGrace = () => $('confirm').querySelector('input[name="grace"]:checked')?.value ?? 'now';

async function keyAction(path, done, payload) {
  const buttons = document.querySelectorAll('.actions button, #end-grace');
  for (const b of buttons) b.disabled = true;
  try {
    const answer = await post(path, payload);
    if (answer.status === 401) return signedOut(answer.error);
    if (!answer.ok) return say($('account-result'), answer.error, 'error');
    done(answer.body);
    showState();
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

const keyNow = (apiKey) => ({ id: apiKey.slice(0, 12), createdAt: new Date().toISOString() });

$('issue').addEventListener('click', () =>
  keyAction('/portal/keys', ({ apiKey }) => {
    session.key = keyNow(apiKey);
    showKey('Your new key:', apiKey);
  }),
);
$('rotate').addEventListener('click', async () => {
  const old = ending();
  const text =
    `You get a new key, and your key ${session.key.id}… stops working everywhere it is used: at once, or after the time you choose. This cannot be undone.` +
    (old ? ` Your older key ${old.id}… stops at once.` : '');
  if (!(await confirmed('Rotate your key?', text, 'Yes, rotate', true))) return $('rotate').focus();
  const grace = chosenGrace();
  await keyAction(
    '/portal/keys/rotate',
    ({ apiKey, ending: next }) => {
      session.key = keyNow(apiKey);
      session.ending = next ?? null;
      showKey(next ? `Your new key (the old one works until ${new Date(next.endsAt).toLocaleString()}):` : 'Your new key (the old one no longer works):', apiKey);
    },
    { grace },
  );
});
$('end-grace').addEventListener('click', async () => {
  const text = `Your old key ${ending()?.id ?? ''}… stops working at once, everywhere it is still used. Your current key goes on working.`;
  if (!(await confirmed('Stop the old key now?', text, 'Yes, stop it'))) return $('end-grace').focus();
  await keyAction('/portal/keys/end-grace', () => {
    session.ending = null;
    say($('account-result'), 'Old key stopped: it no longer works. Your current key goes on working.', 'ok');
  });
});
$('revoke').addEventListener('click', async () => {
  const old = ending();
  const text = `Your key ${session.key.id}… stops working at once, everywhere it is used${old ? `, and so does your old key ${old.id}…` : ''}. You can get a new key afterwards.`;
  if (!(await confirmed('Revoke your key?', text, 'Yes, revoke'))) return $('revoke').focus();
  await keyAction('/portal/keys/revoke', () => {
    session.key = null;
    session.ending = null;
    say($('account-result'), 'Key revoked: it no longer works. You can get a new one above.', 'ok');
  });
});
$('sign-out').addEventListener('click', async () => {
  $('sign-out').disabled = true;
  try {
    const answer = await post('/portal/sign-out');
    // 401: the session had already ended on the server; either way it is over here too.
    if (answer.ok || answer.status === 401) return signedOut('Signed out. Sign in again with a new link.', 'ok');
    say($('account-result'), answer.error, 'error');
  } finally {
    $('sign-out').disabled = false;
  }
});

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('email');
  const button = event.target.querySelector('button');
  const email = input.value.trim();
  if (!email) {
    say($('sign-in-result'), 'Enter your e-mail address.', 'error');
    return input.focus();
  }
  button.disabled = true;
  try {
    const answer = await post('/portal/sign-in', { email });
    if (answer.ok) say($('sign-in-result'), `Check your inbox: ${answer.body.message}`, 'ok');
    else say($('sign-in-result'), answer.error, 'error');
  } finally {
    button.disabled = false;
  }
});

/** The link's token, taken out of the address bar before anything else happens. */
function takeToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  const token = params.get('token') || query.get('token');
  if (token) history.replaceState(null, '', location.pathname);
  return token;
}

async function openLink() {
  const token = takeToken();
  if (!token) return false;
  session = null; // a new link replaces whatever session this tab had
  const answer = await post('/portal/session', { token });
  if (!answer.ok) {
    say($('sign-in-result'), answer.error, 'error');
    return true;
  }
  signedIn(answer.body);
  return true;
}

/** After a reload: the tab's session, if the server still knows it. */
async function resume() {
  const token = stored();
  if (!token) return;
  session = { session: token };
  const answer = await post('/portal/account');
  if (answer.ok) return signedIn({ session: token, ...answer.body });
  if (answer.status === 401) return signedOut('Your session has ended: sign in again with a new link.');
  session = null;
  say($('sign-in-result'), answer.error, 'error');
}

openLink().then((opened) => opened || resume());
// A link opened in a tab that already shows the portal changes only the fragment: no new page load.
addEventListener('hashchange', openLink);
