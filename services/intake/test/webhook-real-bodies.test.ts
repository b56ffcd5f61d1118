import { describe, expect, it } from 'vitest';
import { intake, receivedFor, useIntake } from './webhook-fixtures.js';

/** Bodies as real senders write them, beyond a UTF-8 JSON object labelled application/json. */

useIntake();

function post(token: string, body: string | Buffer, contentType: string) {
  return intake.app.inject({
    method: 'POST',
    url: `/api/webhooks/inbound/${token}`,
    headers: { 'content-type': contentType },
    payload: body,
  });
}

describe('bodies real senders post', () => {
  it('an HTML form on a Windows-1252 / ISO-8859-1 page: its accents arrive intact', async () => {
    // A browser encodes a form in its page's charset and declares none: "François" is Fran%E7ois.
    const source = await intake.addSource();
    const response = await post(
      source.token,
      'firstName=Fran%E7ois&lastName=M%FCller&email=fm%40exemple.test&company=Soci%E9t%E9+G%E9n%E9rale&message=Caf%E9+%80+cr%E8me',
      'application/x-www-form-urlencoded',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event!.data.fields).toEqual({
      firstName: 'François',
      lastName: 'Müller',
      email: 'fm@exemple.test',
      company: 'Société Générale',
    });
    expect(event!.data.custom).toEqual({ message: 'Café € crème' });
  });

  it('a UTF-8 form stays UTF-8, and a declared charset is the one read', async () => {
    const source = await intake.addSource();
    const utf8 = await post(
      source.token,
      'firstName=Fran%C3%A7ois&email=utf8%40exemple.test',
      'application/x-www-form-urlencoded',
    );
    const latin1 = await post(
      source.token,
      Buffer.from('{"firstName":"Zo\u00eb","email":"latin1@exemple.test"}', 'latin1'),
      'application/json; charset=ISO-8859-1',
    );
    expect([utf8.statusCode, latin1.statusCode]).toEqual([200, 200]);
    const events = await receivedFor(source.sourceId, 2);
    expect(events.map((event) => event.data.fields)).toEqual([
      { firstName: 'François', email: 'utf8@exemple.test' },
      { firstName: 'Zoë', email: 'latin1@exemple.test' },
    ]);
    const unknown = await post(source.token, '{"email":"a@b.test"}', 'application/json; charset=klingon');
    expect(unknown.statusCode).toBe(415);
    expect(unknown.json()).toEqual({ error: 'Unsupported charset: klingon; send UTF-8' });
  });

  it('Google Apps Script: JSON posted without a contentType (UrlFetchApp labels it a form)', async () => {
    // UrlFetchApp.fetch(url, {method: 'post', payload: JSON.stringify(e.namedValues)}): contentType
    // "defaults to 'application/x-www-form-urlencoded'" (developers.google.com/apps-script/reference/
    // url-fetch/url-fetch-app#fetch(String,Object)).
    const source = await intake.addSource({
      fieldMappings: { 'Email Address': 'email', Name: 'fullName' },
    });
    const response = await post(
      source.token,
      JSON.stringify({
        Timestamp: ['11/28/2026 10:00:00'],
        'Email Address': ['ana@souza.test'],
        Name: ['Ana Souza'],
      }),
      'application/x-www-form-urlencoded',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event!.data.fields).toEqual({ email: 'ana@souza.test', firstName: 'Ana', lastName: 'Souza' });
    expect(event!.data.custom).toEqual({ Timestamp: ['11/28/2026 10:00:00'] });
  });

  it("a static site's sendBeacon or no-cors fetch: JSON as text/plain", async () => {
    const source = await intake.addSource();
    const response = await post(
      source.token,
      JSON.stringify({ email: 'beacon@site.test', firstName: 'Ada' }),
      'text/plain;charset=UTF-8',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event!.data.fields).toEqual({ email: 'beacon@site.test', firstName: 'Ada' });
    // Text that is not JSON is still not a payload.
    const prose = await post(source.token, 'email=a@b.c', 'text/plain');
    expect(prose.statusCode).toBe(415);
  });

  it('JSON with a byte order mark (PowerShell, .NET writers)', async () => {
    const source = await intake.addSource();
    const response = await post(
      source.token,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"email":"bom@ps.test"}')]),
      'application/json',
    );
    expect(response.statusCode).toBe(200);
    const [event] = await receivedFor(source.sourceId, 1);
    expect(event!.data.fields).toEqual({ email: 'bom@ps.test' });
  });
});
