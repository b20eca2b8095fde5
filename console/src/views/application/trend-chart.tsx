// The trend drawn by uPlot on a canvas. uPlot is loaded only when a chart is first shown (a
// separate chunk: the portfolio never pays for it); its stylesheet comes with the page's own.
// uPlot writes element.style properties only, never style attributes, so the page's CSP
// (style-src 'self') holds. The canvas is an image to assistive technology: the numbers are in the
// table beside it.
import "uplot/dist/uPlot.min.css";
import type uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";
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
  const box = useRef<HTMLDivElement>(null);
  // The chunk's fetch can fail (the network blinked as the chart first showed): say so, not throw.
  const [unavailable, setUnavailable] = useState(false);
  useEffect(() => {
    let chart: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let gone = false;
    void import("uplot").then(
      ({ default: UPlot }) => {
        if (gone || !box.current) return;
        const data: uPlot.AlignedData = [
          points.map((p) => Date.parse(p.at) / 1000),
          ...SERIES.map((s) => points.map((p) => p[s.key])),
        ];
        chart = new UPlot(options(box.current.clientWidth, hourly), data, box.current);
        observer = new ResizeObserver(() => {
          if (box.current && chart && box.current.clientWidth !== chart.width)
            chart.setSize({ width: box.current.clientWidth, height: HEIGHT });
        });
        observer.observe(box.current);
      },
      () => setUnavailable(true),
    );
    return () => {
      gone = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [points, hourly]);
  if (unavailable)
    return <p>The chart could not be loaded: its numbers are in the table below (reload the page to try again).</p>;
  return <div ref={box} class={styles.chart} />;
}
