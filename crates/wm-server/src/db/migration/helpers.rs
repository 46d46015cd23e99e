//! Helpers shared by the migrations (the table definitions themselves stay frozen).

use sea_orm_migration::prelude::*;

/// A foreign key `table.col → to.id`, deleted with its parent.
pub fn fk(table: &'static str, col: &'static str, to: &'static str) -> ForeignKeyCreateStatement {
    fk_on_delete(table, col, to, ForeignKeyAction::Cascade)
}

/// A foreign key `table.col → to.id` that is cleared, not deleted, with its parent (an
/// optional reference such as a contact's owner).
pub fn fk_set_null(
    table: &'static str,
    col: &'static str,
    to: &'static str,
) -> ForeignKeyCreateStatement {
    fk_on_delete(table, col, to, ForeignKeyAction::SetNull)
}

fn fk_on_delete(
    table: &'static str,
    col: &'static str,
    to: &'static str,
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{table}_{col}"))
        .from(table, col)
        .to(to, "id")
        .on_delete(on_delete)
        .to_owned()
}

/// An index over `cols` of `table`.
pub fn index(
    name: &str,
    table: &'static str,
    cols: &[&'static str],
    unique: bool,
) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(name).table(table);
    for c in cols {
        i.col(*c);
    }
    if unique {
        i.unique();
    }
    i.to_owned()
}

/// A PostgreSQL trigger function `name()` running `body`, for a statement trigger.
pub fn pg_function(name: &str, body: &str) -> String {
    format!(
        "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} \
         RETURN NULL; END $$"
    )
}

/// A PostgreSQL statement trigger `name` after `event` on `table`, seeing the rows it
/// changed as `transition` tables, that calls the function of the same name.
pub fn pg_statement_trigger(name: &str, event: &str, table: &str, transition: &str) -> String {
    format!(
        "CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {transition} \
         FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
    )
}
