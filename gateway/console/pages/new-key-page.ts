import { html } from '../html';
import { csrfField, layout, type PageContext } from './layout';

/** The form that creates a key (admin role). */
export function newKeyPage(ctx: PageContext): string {
  return layout('Create a key', ctx, html`
<form class="stacked" method="post" action="/console/keys">
  ${csrfField(ctx)}
  <label for="id">Key id (A-Z a-z 0-9 . _ -) <input id="id" name="id" required maxlength="64"></label>
  <label for="tier">Tier <select id="tier" name="tier"><option value="standard">standard</option><option value="advanced">advanced</option></select></label>
  <label for="countries">Countries (comma-separated alpha-2) <input id="countries" name="countries" required placeholder="GB, FR"></label>
  <label for="address">Address (the caller's IPv4 or IPv6 address) <input id="address" name="address" required></label>
  <label for="per_minute">Per minute (empty: the tier's) <input id="per_minute" name="per_minute" inputmode="numeric"></label>
  <label for="per_day">Per day (empty: the tier's) <input id="per_day" name="per_day" inputmode="numeric"></label>
  <label for="per_month">Per month (empty: the tier's) <input id="per_month" name="per_month" inputmode="numeric"></label>
  <div><button type="submit">Create the key</button></div>
</form>`);
}
