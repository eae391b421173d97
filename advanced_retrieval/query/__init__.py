"""Understanding a query before it is searched: the `auto` strategy choice and quoted phrases (`plan`), the
documents it names (`naming`) and the pages whose headings name what it asks about (`sections`)."""

from advanced_retrieval.query.naming import NamedDocuments
from advanced_retrieval.query.plan import QueryPlan, choose_strategy, plan_query
from advanced_retrieval.query.sections import Sections

__all__ = ["NamedDocuments", "QueryPlan", "Sections", "choose_strategy", "plan_query"]
