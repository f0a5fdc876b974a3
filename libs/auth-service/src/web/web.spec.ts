import { expiryBounds } from '../dashboard/token-form';
import { html } from './html';

describe('pages', () => {
  it('escape every interpolated value unless it is markup made by html', () => {
    const name = `<script>alert("x")</script>' onmouseover='x`;
    const out = html`<td title="${name}">${name}</td>${html`<b>${'&'}</b>`}`.value;
    expect(out).toBe(
      '<td title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;x</td><b>&amp;</b>',
    );
    expect(html`${[1, 'a<']}${null}${undefined}${false}`.value).toBe('1a&lt;');
  });

  it('bound the expiry date from today to one year from today (UTC)', () => {
    expect(expiryBounds(new Date('2026-03-15T23:59:00Z'))).toEqual({ min: '2026-03-15', max: '2027-03-15' });
  });
});
