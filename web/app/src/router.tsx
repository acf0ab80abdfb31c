// A small history router: paths are the client's pages (the server serves index.html for
// each prefix listed in server/src/http/assets.rs), links are plain <a href> that navigate in place.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
/** Forms with unsaved changes ([`useUnsavedGuard`]): leaving asks first. */
const guards = new Set<object>();
const LEAVE = 'You have unsaved changes. Leave this page anyway? (A draft stays in this browser.)';
let here = location.pathname + location.search;

function mayLeave(): boolean {
  return guards.size === 0 || window.confirm(LEAVE);
}

export function navigate(to: string, opts: { replace?: boolean } = {}) {
  if (!mayLeave()) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  here = location.pathname + location.search;
  listeners.forEach((l) => l());
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  // Back and forward cannot be cancelled: a "stay" puts the page's address back.
  if (!mayLeave()) {
    history.pushState(null, '', here);
    return;
  }
  here = location.pathname + location.search;
  listeners.forEach((l) => l());
});

/** While `dirty`, leaving the page (a link, back, reload, closing the tab) asks first. */
export function useUnsavedGuard(dirty: boolean) {
  useEffect(() => {
    if (!dirty) return;
    const token = {};
    guards.add(token);
    const beforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', beforeUnload);
    return () => {
      guards.delete(token);
      window.removeEventListener('beforeunload', beforeUnload);
    };
  }, [dirty]);
}

export type Location = { path: string; query: URLSearchParams };

export function useLocation(): Location {
  const read = () => ({ path: location.pathname, query: new URLSearchParams(location.search) });
  const [loc, setLoc] = useState<Location>(read);
  useEffect(() => {
    const l = () => setLoc(read());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return loc;
}

/** Matches `/e/:slug/judge/:id` against a path; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const ps = pattern.split('/').filter(Boolean);
  const xs = path.split('/').filter(Boolean);
  if (ps.length !== xs.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < ps.length; i++) {
    if (ps[i].startsWith(':')) params[ps[i].slice(1)] = decodeURIComponent(xs[i]);
    else if (ps[i] !== xs[i]) return null;
  }
  return params;
}

type LinkProps = JSX.HTMLAttributes<HTMLAnchorElement> & { href: string; children?: ComponentChildren };

/** An in-app link: a real anchor (middle-click and copy work), navigating in place. */
export function Link({ href, children, ...rest }: LinkProps) {
  const current = typeof window !== 'undefined' && location.pathname === href;
  return (
    <a
      href={href}
      aria-current={current ? 'page' : undefined}
      {...rest}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
