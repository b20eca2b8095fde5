// A chart drawn by uPlot on a canvas. uPlot is loaded only when a chart is first shown (a separate
// chunk: the portfolio never pays for it); its stylesheet comes with the page's own. uPlot writes
// element.style properties only, never style attributes, so the page's CSP (style-src 'self')
// holds. The canvas is an image to assistive technology: the numbers are in a table beside it.
import "uplot/dist/uPlot.min.css";
import type uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";

/** The chart's options and data for a width; memoised by the caller (a new one draws it anew). */
export type ChartMaker = (UPlot: typeof uPlot, width: number) => { options: uPlot.Options; data: uPlot.AlignedData };

export function UplotChart({ make, height, class: className }: { make: ChartMaker; height: number; class?: string }) {
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
        const { options, data } = make(UPlot, box.current.clientWidth);
        chart = new UPlot(options, data, box.current);
        observer = new ResizeObserver(() => {
          if (box.current && chart && box.current.clientWidth !== chart.width)
            chart.setSize({ width: box.current.clientWidth, height });
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
  }, [make, height]);
  if (unavailable)
    return <p>The chart could not be loaded: its numbers are in the table below (reload the page to try again).</p>;
  return <div ref={box} class={className} />;
}
