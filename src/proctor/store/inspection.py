"""What the store's file holds beside its content (`Store.schema`): its schema version, tables, triggers and
journal mode, as its own connection sees them (inside a transaction too)."""

from __future__ import annotations

from proctor.store.repository import Repository


class SchemaRepository(Repository):
    """Reads of `sqlite_master`, `meta` and the pragmas."""

    def version(self) -> int:
        """The schema version the store is of (`meta`)."""
        return int(self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])

    def journal_mode(self) -> str:
        """SQLite's journal mode of the connection (`wal` but inside a bulk write)."""
        return str(self.db.execute("PRAGMA journal_mode").fetchone()[0]).lower()

    def triggers(self, table: str | None = None) -> list[tuple[str, str]]:
        """(name, SQL) of the triggers (on one table), by name."""
        sql, args = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'", ()
        if table is not None:
            sql, args = sql + " AND tbl_name = ?", (table,)
        return list(self.db.execute(sql + " ORDER BY name", args))

    def names(self, prefix: str = "") -> set[str]:
        """Names of the tables, indexes and triggers that start with `prefix`."""
        return {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE substr(name, 1, ?) = ?",
                                                  (len(prefix), prefix))}

    def columns(self, table: str) -> list[str]:
        """The columns of a table, in order."""
        if table not in self.names(table):
            return []
        return [row[1] for row in self.db.execute(f'PRAGMA table_info("{table}")')]
