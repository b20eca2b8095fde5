-- Event data is sent to receivers as written: json keeps the key order the event catalogue
-- documents (jsonb would reorder keys). Nothing queries inside it.
ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE JSON USING "data"::json;
