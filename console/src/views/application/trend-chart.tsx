// The trend drawn by uPlot (UplotChart loads it and keeps the canvas sized): a line per severity.
import type uPlot from "uplot";
import { useCallback } from "preact/hooks";
import { UplotChart, type ChartMaker } from "../../components/uplot-chart.tsx";
import type { TrendPoint } from "./use-vulnerability-trend.ts";
import styles from "./trend-section.module.css";

export const SERIES = [
  { key: "critical", label: "Critical", color: "#b42318", dash: [] },
  { key: "high", label: "High", color: "#c4320a", dash: [8, 4] },
  { key: "medium", label: "Medium", color: "#a15c07", dash: [2, 3] },
  { key: "low", label: "Low", color: "#1f4e8c", dash: [8, 3, 2, 3] },
] as const;

const HEIGHT = 220;

function options(width: number, hourly: boolean): uPlot.Options {
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [
      {
        stroke: "#344054",
        grid: { stroke: "#eaecf0" },
        ...(hourly
          ? {}
          : {
              values: (_u: uPlot, ticks: number[]) =>
                ticks.map((t) => new Date(t * 1000).toLocaleDateString(undefined, { month: "short", day: "numeric" })),
            }),
      },
      { stroke: "#344054", grid: { stroke: "#eaecf0" }, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] },
    ],
    series: [
      {},
      ...SERIES.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: [...s.dash], points: { show: false } })),
    ],
  };
}

export function TrendChart({ points, hourly }: { points: readonly TrendPoint[]; hourly: boolean }) {
  const make = useCallback<ChartMaker>(
    (_, width) => ({
      options: options(width, hourly),
      data: [points.map((p) => Date.parse(p.at) / 1000), ...SERIES.map((s) => points.map((p) => p[s.key]))],
    }),
    [points, hourly],
  );
  return <UplotChart make={make} height={HEIGHT} class={styles.chart} />;
}
