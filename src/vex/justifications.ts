// A justification is kept in the vocabulary of the document that gave it; an export in the other
// format says it in its own. The two vocabularies do not map one to one: these are the nearest
// labels (CycloneDX's protections all become OpenVEX's inline mitigations, for instance).
import type { Justification } from "../domain/vulnerabilities/analysis.ts";
import type { CYCLONEDX_JUSTIFICATIONS, OPENVEX_JUSTIFICATIONS } from "../domain/vulnerabilities/analysis.ts";

type OpenVexJustification = (typeof OPENVEX_JUSTIFICATIONS)[number];
type CycloneDxJustification = (typeof CYCLONEDX_JUSTIFICATIONS)[number];

const TO_CYCLONEDX: Record<OpenVexJustification, CycloneDxJustification> = {
  component_not_present: "code_not_present",
  vulnerable_code_not_present: "code_not_present",
  vulnerable_code_not_in_execute_path: "code_not_reachable",
  vulnerable_code_cannot_be_controlled_by_adversary: "requires_environment",
  inline_mitigations_already_exist: "protected_by_mitigating_control",
};

const TO_OPENVEX: Record<CycloneDxJustification, OpenVexJustification> = {
  code_not_present: "vulnerable_code_not_present",
  code_not_reachable: "vulnerable_code_not_in_execute_path",
  requires_configuration: "vulnerable_code_cannot_be_controlled_by_adversary",
  requires_dependency: "component_not_present",
  requires_environment: "vulnerable_code_cannot_be_controlled_by_adversary",
  protected_by_compiler: "inline_mitigations_already_exist",
  protected_at_runtime: "inline_mitigations_already_exist",
  protected_at_perimeter: "inline_mitigations_already_exist",
  protected_by_mitigating_control: "inline_mitigations_already_exist",
};

export const asOpenVexJustification = (j: Justification): OpenVexJustification =>
  j in TO_OPENVEX ? TO_OPENVEX[j as CycloneDxJustification] : (j as OpenVexJustification);

export const asCycloneDxJustification = (j: Justification): CycloneDxJustification =>
  j in TO_CYCLONEDX ? TO_CYCLONEDX[j as OpenVexJustification] : (j as CycloneDxJustification);
