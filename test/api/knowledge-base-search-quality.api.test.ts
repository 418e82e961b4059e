import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { World } from '../support/builders.js';
import { createTestContext, type TestContext } from '../support/context.js';
import { runKnowledgeBaseJobs } from '../support/knowledge-base.js';
import { makeDocx, makePdf } from '../support/kb-fixtures.js';

/**
 * Search quality over knowledge from where it lives: a German FAQ web page (uploaded as HTML), a
 * PDF price list and a DOCX with opening hours, and 20 questions, each with a phrase of the
 * section that answers it. Keyword search must bring that section into the top 3 for 18 of 20.
 */
let ctx: TestContext;
let w: World;
let agentId: string;

const FAQ_HTML = `<!doctype html><html lang="de"><head><title>Häufige Fragen – Autohaus Berger</title></head><body>
<nav><a href="/">Start</a> <a href="/leistungen">Leistungen</a> <a href="/kontakt">Kontakt</a></nav>
<main><article><h1>Häufige Fragen</h1>
<h2>Wie vereinbare ich einen Termin?</h2>
<p>Einen Werkstatttermin vereinbaren Sie telefonisch unter 0821 123456 oder online über unser Terminformular. Kurzfristige Termine sind meist innerhalb von zwei Werktagen möglich.</p>
<h2>Welche Zahlungsarten akzeptieren Sie?</h2>
<p>Sie können bar, mit EC-Karte, Kreditkarte oder per Überweisung bezahlen. Eine Ratenzahlung ist für Reparaturen ab 500 Euro möglich.</p>
<h2>Bekomme ich einen Ersatzwagen?</h2>
<p>Während der Reparatur stellen wir Ihnen einen Leihwagen zur Verfügung. Bitte reservieren Sie den Ersatzwagen bei der Terminvereinbarung.</p>
<h2>Lagern Sie meine Reifen ein?</h2>
<p>Ja, die Reifeneinlagerung kostet 60 Euro pro Saison inklusive Reinigung und Prüfung der Profiltiefe.</p>
<h2>Gibt es eine Garantie auf Reparaturen?</h2>
<p>Auf alle Reparaturen und eingebauten Ersatzteile geben wir zwei Jahre Gewährleistung.</p>
<h2>Kann ich einen Termin absagen?</h2>
<p>Eine Stornierung ist bis 24 Stunden vorher kostenlos. Danach berechnen wir eine Ausfallgebühr von 30 Euro.</p>
<h2>Bieten Sie einen Abschleppdienst an?</h2>
<p>Unser Abschleppdienst holt liegengebliebene Fahrzeuge im Umkreis von 50 Kilometern ab.</p>
<h2>Ist die Werkstatt barrierefrei?</h2>
<p>Der Kundenbereich ist ebenerdig und rollstuhlgerecht, eine barrierefreie Toilette ist vorhanden.</p>
</article></main><footer>Impressum · Datenschutz</footer></body></html>`;

const PRICE_PAGES = [
  [
    'Preisliste Werkstatt 2026',
    'Ölwechsel inklusive Filter: 89 Euro',
    'Kleine Inspektion: 149 Euro',
    'Große Inspektion: 299 Euro',
    'Reifenwechsel (Räder umstecken): 40 Euro',
  ],
  [
    'Klimaservice mit Desinfektion: 99 Euro',
    'Hauptuntersuchung beim TÜV: 139 Euro',
    'Bremsbeläge vorne wechseln: 220 Euro',
    'Scheibenreparatur Steinschlag: 75 Euro',
  ],
];

const HOURS = [
  { heading: 'Öffnungszeiten' },
  { paragraph: 'Unsere Werkstatt ist zu diesen Zeiten geöffnet:' },
  { bullet: 'Montag bis Freitag: 7:30 bis 18 Uhr' },
  { bullet: 'Samstag: 9 bis 13 Uhr' },
  { bullet: 'Sonntag geschlossen' },
  { heading: 'Feiertage' },
  { paragraph: 'An gesetzlichen Feiertagen bleibt das Autohaus geschlossen, auch an Heiligabend und Silvester.' },
  { heading: 'Betriebsurlaub' },
  { paragraph: 'Betriebsferien sind jedes Jahr in den ersten zwei Augustwochen.' },
  { heading: 'Notdienst' },
  { paragraph: 'Außerhalb der Öffnungszeiten erreichen Sie den Pannen-Notdienst rund um die Uhr unter 0821 999.' },
];

/** Question and a phrase of the section that answers it. */
const QUESTIONS: [string, string][] = [
  ['Wie kann ich einen Termin vereinbaren?', 'Werkstatttermin vereinbaren'],
  ['Kann ich mit Kreditkarte bezahlen?', 'EC-Karte, Kreditkarte'],
  ['Gibt es Ratenzahlung?', 'Ratenzahlung'],
  ['Bekomme ich einen Leihwagen während der Reparatur?', 'Leihwagen'],
  ['Was kostet die Reifeneinlagerung?', 'Reifeneinlagerung kostet'],
  ['Wie lange ist die Garantie auf Reparaturen?', 'Gewährleistung'],
  ['Was kostet eine Stornierung?', 'Stornierung'],
  ['Habt ihr einen Abschleppdienst?', 'Abschleppdienst holt'],
  ['Ist die Werkstatt rollstuhlgerecht?', 'rollstuhlgerecht'],
  ['Was kostet ein Ölwechsel?', 'Ölwechsel inklusive Filter'],
  ['Preis der großen Inspektion', 'Große Inspektion'],
  ['Was kostet der Reifenwechsel?', 'Reifenwechsel (Räder umstecken)'],
  ['Was kostet der Klimaservice?', 'Klimaservice'],
  ['Was kostet die Hauptuntersuchung beim TÜV?', 'Hauptuntersuchung'],
  ['Preis für Bremsbeläge vorne', 'Bremsbeläge'],
  ['Wann habt ihr samstags geöffnet?', 'Samstag: 9 bis 13 Uhr'],
  ['Öffnungszeiten Montag bis Freitag', 'Montag bis Freitag: 7:30'],
  ['Habt ihr an Feiertagen geöffnet?', 'gesetzlichen Feiertagen'],
  ['Wann ist Betriebsurlaub?', 'Betriebsferien'],
  ['Gibt es einen Notdienst am Wochenende?', 'Pannen-Notdienst'],
];

beforeAll(async () => {
  ctx = await createTestContext();
  w = await ctx.build.world();
  agentId = (await ctx.build.agent(w.orgId, { name: 'Autohaus Berger', language: 'de' })).id;
  const upload = (data: Buffer, filename: string) =>
    ctx.http
      .post(`/v1/agents/${agentId}/knowledge-base/files`)
      .set('X-API-Key', w.key)
      .attach('file', data, filename)
      .expect(202);
  await upload(Buffer.from(FAQ_HTML), 'faq.html');
  await upload(makePdf({ pages: PRICE_PAGES }), 'preisliste.pdf');
  await upload(makeDocx(HOURS), 'oeffnungszeiten.docx');
  await runKnowledgeBaseJobs(ctx);
});
afterAll(() => ctx.close());

describe('search quality over files', () => {
  it('finds the answering section in the top 3 for at least 18 of 20 questions', async () => {
    const statuses = await ctx.db('kb_documents').where({ agent_id: agentId }).pluck('status');
    expect(statuses).toEqual(['ready', 'ready', 'ready']);
    const misses: string[] = [];
    for (const [query, phrase] of QUESTIONS) {
      const res = await ctx.http
        .post(`/v1/agents/${agentId}/knowledge-base/search`)
        .set('X-API-Key', w.key)
        .send({ query, top_k: 3 })
        .expect(200);
      const found = (res.body.data as { content: string }[]).some((hit) => hit.content.includes(phrase));
      if (!found) misses.push(query);
    }
    expect(misses.length, `missed: ${misses.join(' | ')}`).toBeLessThanOrEqual(2);
  });
});
