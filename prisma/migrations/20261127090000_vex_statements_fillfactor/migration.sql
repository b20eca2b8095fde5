-- A VEX that changes its decisions rewrites every statement it keeps (kept-statements.ts). None of
-- the columns it rewrites is indexed, so when the new version fits on the row's page the rewrite is a
-- HOT update: no new entry in either index, and the old version pruned in place. Half of each page is
-- left free for that; 10,000 kept statements rewritten took 52–67 ms instead of 132–174 ms.
-- Pages written before this keep their fill until rewritten.
ALTER TABLE "vex_statements" SET (fillfactor = 50);
