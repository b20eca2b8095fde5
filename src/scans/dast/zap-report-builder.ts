// The baseline scan's output: OWASP ZAP's traditional JSON report (what `zap-baseline.py -J` writes),
// one alert per rule with the places it fired as instances, so src/scans/reports/zap-report.ts reads
// it exactly as it reads a report uploaded from ZAP itself.
import type { PassiveRule, RuleHit } from "./passive-rule.ts";

export interface ZapInstance {
  uri: string;
  method: string;
  param: string;
  attack: string;
  evidence: string;
  otherinfo: string;
}

export interface ZapAlert {
  pluginid: string;
  alertRef: string;
  alert: string;
  name: string;
  riskcode: string;
  confidence: string;
  riskdesc: string;
  desc: string;
  instances: ZapInstance[];
  count: string;
  solution: string;
  otherinfo: string;
  reference: string;
  cweid: string;
  wascid: string;
}

export interface ZapReportDocument {
  "@programName": string;
  "@version": string;
  "@generated": string;
  site: Array<{ "@name": string; "@host": string; "@port": string; "@ssl": string; alerts: ZapAlert[] }>;
}

const LEVEL = ["Informational", "Low", "Medium", "High"] as const;

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
/** ZAP writes its texts as HTML paragraphs. */
const paragraphs = (...texts: string[]) => texts.map((text) => `<p>${escapeHtml(text)}</p>`).join("");

export class ZapReportBuilder {
  private readonly instances = new Map<PassiveRule, Map<string, ZapInstance>>();

  constructor(
    private readonly site: URL,
    private readonly program: { name: string; version: string },
  ) {}

  add(rule: PassiveRule, url: URL, hit: RuleHit): void {
    const instance: ZapInstance = {
      uri: url.href,
      method: "GET",
      param: hit.param ?? "",
      attack: "",
      evidence: hit.evidence ?? "",
      otherinfo: hit.otherInfo ?? "",
    };
    const ofRule = this.instances.get(rule) ?? new Map<string, ZapInstance>();
    ofRule.set(JSON.stringify([instance.uri, instance.param, instance.evidence]), instance);
    this.instances.set(rule, ofRule);
  }

  /** The report so far: alerts by risk (highest first), then by plugin id, as ZAP orders them. */
  document(generated = new Date()): ZapReportDocument {
    const alerts = [...this.instances]
      .sort(([a], [b]) => b.risk - a.risk || a.pluginId - b.pluginId || a.alertRef.localeCompare(b.alertRef))
      .map(([rule, instances]): ZapAlert => ({
        pluginid: String(rule.pluginId),
        alertRef: rule.alertRef,
        alert: rule.name,
        name: rule.name,
        riskcode: String(rule.risk),
        confidence: String(rule.confidence),
        riskdesc: `${LEVEL[rule.risk]} (${LEVEL[rule.confidence]})`,
        desc: paragraphs(rule.description),
        instances: [...instances.values()],
        count: String(instances.size),
        solution: paragraphs(rule.solution),
        otherinfo: "",
        reference: paragraphs(...rule.references),
        cweid: String(rule.cweId),
        wascid: String(rule.wascId),
      }));
    const ssl = this.site.protocol === "https:";
    return {
      "@programName": this.program.name,
      "@version": this.program.version,
      "@generated": generated.toUTCString(),
      site: [
        {
          "@name": this.site.origin,
          "@host": this.site.hostname,
          "@port": this.site.port || (ssl ? "443" : "80"),
          "@ssl": String(ssl),
          alerts,
        },
      ],
    };
  }
}
