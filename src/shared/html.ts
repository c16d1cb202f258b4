/**
 * Text made safe inside HTML, as element content and as a quoted attribute
 * value: the five characters HTML gives meaning become numeric references.
 * Shared by the pages the build writes and the mails the portal sends.
 */
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
