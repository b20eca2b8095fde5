/** NOTIFY channel that wakes scan runners and long-polling agents when a scan may be claimable (polling covers a missed one). */
export const SCAN_QUEUED_CHANNEL = "appsec_scan_queued";
