//! Helpers shared by the migrations (the table definitions themselves stay frozen).

use sea_orm_migration::prelude::*;

/// A foreign key `table.col → to.id`, deleted with its parent.
pub fn fk(table: &'static str, col: &'static str, to: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{table}_{col}"))
        .from(table, col)
        .to(to, "id")
        .on_delete(ForeignKeyAction::Cascade)
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
