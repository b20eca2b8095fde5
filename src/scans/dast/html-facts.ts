// What the passive rules and the crawl need from an HTML page, read in one streaming pass of
// htmlparser2 (the parser cheerio is built on): every element's name and attributes in document
// order, and each form with the controls inside it. No tree is built and no script runs.
import { Parser } from "htmlparser2";

export interface HtmlElement {
  /** Lower-case tag name. */
  name: string;
  /** Lower-case attribute names, entity-decoded values. */
  attribs: Readonly<Record<string, string>>;
}

export interface HtmlForm extends HtmlElement {
  /** input, button, select and textarea elements inside the form. */
  controls: HtmlElement[];
}

export interface HtmlFacts {
  elements: HtmlElement[];
  forms: HtmlForm[];
}

const CONTROLS = new Set(["input", "button", "select", "textarea"]);

export function readHtml(markup: string): HtmlFacts {
  const facts: HtmlFacts = { elements: [], forms: [] };
  let openForm: HtmlForm | undefined;
  let innerForms = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const element = { name, attribs };
        facts.elements.push(element);
        if (name === "form") {
          // A form inside a form is invalid HTML; browsers ignore the inner one, and so does this.
          if (openForm) return void innerForms++;
          openForm = { ...element, controls: [] };
          facts.forms.push(openForm);
        } else if (openForm && CONTROLS.has(name)) {
          openForm.controls.push(element);
        }
      },
      onclosetag(name) {
        if (name !== "form") return;
        if (innerForms > 0) innerForms--;
        else openForm = undefined;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(markup);
  return facts;
}

/** The `content` of the first `<meta http-equiv="…">` naming the header, if any. */
export function metaHttpEquiv(facts: HtmlFacts, header: string): string | undefined {
  const meta = facts.elements.find(
    (e) => e.name === "meta" && e.attribs["http-equiv"]?.toLowerCase() === header.toLowerCase(),
  );
  return meta && (meta.attribs["content"] ?? "");
}

/** The start tag as markup, for an alert's evidence. */
export function startTag(element: HtmlElement): string {
  const attributes = Object.entries(element.attribs).map(([name, value]) =>
    value === "" ? ` ${name}` : ` ${name}="${value.replace(/"/g, "&quot;")}"`,
  );
  return `<${element.name}${attributes.join("")}>`;
}
