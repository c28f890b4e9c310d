"""Names the PostgreSQL store's modules share (the role filtered reads run as, the setting holding
the principal's groups)."""

#: The role filtered reads run as (row-level security applies to it); cluster-wide, created once.
SEARCH_ROLE = "citewise_search"
#: The transaction setting holding the principal's groups (a text[] literal).
GROUPS_SETTING = "citewise.groups"
