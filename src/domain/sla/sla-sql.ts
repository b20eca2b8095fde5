// A vulnerability's SLA state in SQL, for the reads that filter and count by it (docs/spec/CONTRACT.md
// §19): the functions of migration 20261202120000_sla over the vulnerability aliased `t`, its
// application's criticality and the SLA in force (read once per statement).
const SLA_DOCUMENT = "(SELECT document FROM sla_settings)";

/** The state of the vulnerability `t` in an application of criticality `criticality` (an SQL expression). */
export const slaStateSql = (criticality: string): string =>
  `sla_state(t.status, t.sla_clock_base, t.severity, ${criticality}, ${SLA_DOCUMENT})`;
