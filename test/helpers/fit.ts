/**
 * Whether a page fits its window: no sideways scroll, no text running
 * out of its box. For the browser suites' checks at every width.
 */
import type { Page } from 'playwright-core';

/**
 * The widths the pages are checked at: phones (320, 390), a tablet (768), laptops
 * on either side of the side menu's breakpoint (1001 to 1280), a desktop.
 */
export const SCREEN_WIDTHS = [320, 390, 768, 1001, 1024, 1100, 1239, 1280, 1920] as const;

/**
 * What does not fit in the page as shown, one line each: the document wider
 * than the window, or an element whose content is wider than its box (text
 * cut off or spilling over its neighbours). A code block (`pre`) may scroll
 * inside itself: what it holds stays reachable and the page does not move.
 */
export function misfits(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.classList.length ? `.${[...el.classList].join('.')}` : ''} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    if (document.documentElement.scrollWidth > window.innerWidth)
      out.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${window.innerWidth} px window`);
    for (const el of document.querySelectorAll('body *')) {
      if (el.closest('pre') || !(el instanceof HTMLElement)) continue;
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden' || el.getClientRects().length === 0) continue;
      const box = el.getBoundingClientRect();
      if (box.right > window.innerWidth + 1 || box.left < -1)
        out.push(`${name(el)} spans ${Math.round(box.left)} to ${Math.round(box.right)} px of ${window.innerWidth}`);
      else if (el.tagName !== 'PRE' && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
        out.push(`${name(el)} holds ${el.scrollWidth} px in ${el.clientWidth} px`);
    }
    return out;
  });
}
