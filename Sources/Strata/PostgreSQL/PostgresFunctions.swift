/// Functions a PostgreSQL store installs in its schema, the SQL twins of SQLFunctions.
enum PostgresFunctions {
    /// Bump when a definition changes (the store re-installs when its stored number differs).
    static let version = 1

    static func definitions() -> [String] {
        [
            """
            CREATE OR REPLACE FUNCTION strata_damaged(entity text, attribute text, key bigint) RETURNS integer LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION USING ERRCODE = 'SD001', MESSAGE = entity || '/' || key, TABLE = entity, COLUMN = attribute; END $$
            """,
            "CREATE OR REPLACE FUNCTION strata_length(x text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT CAST(char_length(x) AS bigint) $$",
            "CREATE OR REPLACE FUNCTION strata_decimal(x text) RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT CAST(x AS numeric) $$",
        ]
    }
}
