// Issue 28, item 3: while the organization's report data is being prepared (a first read after an
// import or a start) and the report could not be computed meanwhile, the Revenue page says so and
// how long is left, and reloads itself then, instead of showing an error.
import { isAppError, type AppError } from '../errors.js';
import { html, type Html } from './html.js';

/** The engine's refusal while a snapshot builds (503 SNAPSHOT_BUILDING), with its Retry-After. */
export function isSnapshotBuilding(error: unknown): error is AppError & { retryAfterS: number } {
  return isAppError(error) && error.code === 'SNAPSHOT_BUILDING' && error.retryAfterS !== undefined;
}

/** « 40 s », « 2 min » : the time left as people say it. */
export function timeLeft(seconds: number): string {
  return seconds < 90 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

/** The notice shown in place of the figures; the page reloads after `seconds`. */
export function buildingNotice(seconds: number): Html {
  return html`<section class="card" aria-label="Calcul en cours">
    <p class="notice" role="status">
      Calcul en cours… Vos données viennent d’arriver et sont en préparation : encore environ
      ${timeLeft(seconds)}. La page se mettra à jour d’elle-même.
    </p>
  </section>`;
}
